"""parse_arguments (strict): values, errors with positions, and Rust vs reference."""

from __future__ import annotations

import json
import math
import pickle
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.core_fixtures import IMPLEMENTATIONS, load_case
from toolweave.exceptions import ToolArgumentsError


def test_objects(core: SimpleNamespace) -> None:
    text = '{"s": "é\\u00e9\\ud83d\\ude00", "i": -12, "f": 2.5e-3, "b": [true, false, null], "o": {"k": {}}}'
    want = {'s': 'éé😀', 'i': -12, 'f': 0.0025, 'b': [True, False, None], 'o': {'k': {}}}
    assert core.parse_arguments(text) == want
    assert core.parse_arguments(text.encode()) == want


def test_empty_means_no_arguments(core: SimpleNamespace) -> None:
    """Case B11: a no-parameter call sends ''; it is normalised to {}."""
    case = load_case('B11')
    assert core.parse_arguments(case['input']['arguments']) == case['expected']['normalised'] == {}
    assert core.parse_arguments(' \t\r\n') == {}
    assert core.parse_arguments(b'') == {}


def test_exact_numbers(core: SimpleNamespace) -> None:
    got = core.parse_arguments('{"big": 123456789012345678901234567890, "neg": -18446744073709551617, "z": -0}')
    assert got == {'big': 123456789012345678901234567890, 'neg': -18446744073709551617, 'z': 0}
    assert type(got['z']) is int
    assert core.parse_arguments('{"inf": 1e400, "tiny": 1e-400}') == {'inf': math.inf, 'tiny': 0.0}


def test_duplicate_keys_last_wins(core: SimpleNamespace) -> None:
    assert list(core.parse_arguments('{"a": 1, "b": 2, "a": 3}').items()) == [('a', 3), ('b', 2)]


@pytest.mark.parametrize(
    ('text', 'position', 'reason'),
    [
        ('{"a": tru', 6, 'expected a value'),
        ('{"a": 1,}', 8, 'expected a string key'),
        ('{"a" 1}', 5, "expected ':'"),
        ('{"a": 1 "b": 2}', 8, "expected ',' or '}'"),
        ('{"a": [1 2]}', 9, "expected ',' or ']'"),
        ('{"a": [1,]}', 9, 'expected a value'),
        ('{"a": "x', 6, 'unterminated string'),
        ('{"a": "\x01"}', 7, 'invalid control character in string'),
        ('{"a": "\\x"}', 7, 'invalid escape'),
        ('{"a": "\\u12g4"}', 7, 'invalid escape'),
        ('{"a": "\\ud800"}', 7, 'invalid surrogate escape'),
        ('{"a": "\\udc00x"}', 7, 'invalid surrogate escape'),
        ('{"a": 01}', 7, "expected ',' or '}'"),
        ('{"a": 1.}', 6, 'invalid number'),
        ('{"a": -}', 6, 'invalid number'),
        ('{"a": 1e+}', 6, 'invalid number'),
        ('{"a": NaN}', 6, 'expected a value'),
        ('{"a": Infinity}', 6, 'expected a value'),
        ("{'a': 1}", 1, "expected a string key or '}'"),
        ('{"a": 1} x', 9, 'extra data after the JSON value'),
        ('{"a": 1}}', 8, 'extra data after the JSON value'),
        ('```json\n{}```', 0, 'expected a value'),
        ('\ufeff{}', 0, 'expected a value'),
        ('{', 1, "expected a string key or '}'"),
        ('[1, 2]', 0, 'expected a JSON object, got array'),
        ('  "s"', 2, 'expected a JSON object, got string'),
        ('12', 0, 'expected a JSON object, got number'),
        ('true', 0, 'expected a JSON object, got boolean'),
        ('null', 0, 'expected a JSON object, got null'),
        ('{"ü": "ö", "x": tru}', 16, 'expected a value'),
    ],
)
def test_errors(core: SimpleNamespace, text: str, position: int, reason: str) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.position, err.line, err.column) == (position, 1, position + 1)
    assert err.excerpt == text[max(0, position - 20) : position + 20]
    assert str(err).startswith(
        f'invalid tool arguments at line 1 column {position + 1} (char {position}): {reason} near '
    )


def test_error_message_format(core: SimpleNamespace) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments('{"a": tru')
    assert str(info.value) == 'invalid tool arguments at line 1 column 7 (char 6): expected a value near \'{"a": tru\''
    assert info.value.message == str(info.value)
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments('{\n  "a": 1,\n  "b": x\n}')
    err = info.value
    assert (err.position, err.line, err.column) == (19, 3, 8)
    assert str(err).endswith('near \'{\\n  "a": 1,\\n  "b": x\\n}\'')
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is ToolArgumentsError and (again.position, again.excerpt) == (err.position, err.excerpt)


def test_bytes_input_errors(core: SimpleNamespace) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments(b'{"\xc3\xa9": "\xff"}')
    assert (info.value.position, info.value.excerpt) == (7, '{"é": "\ufffd"}')
    assert 'invalid UTF-8' in str(info.value)
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments(b'{"a": tr}')
    assert info.value.position == 6


def test_lone_surrogate_in_str(core: SimpleNamespace) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments('{"a": "x\ud800"}')
    assert info.value.position == 8
    assert 'lone surrogate' in str(info.value)


def test_wrong_type(core: SimpleNamespace) -> None:
    with pytest.raises(TypeError, match='expects str, bytes or dict, got NoneType'):
        core.parse_arguments(None)
    with pytest.raises(TypeError, match='expects str, bytes or dict, got bytearray'):
        core.parse_arguments(bytearray(b'{}'))


def test_depth_limit(core: SimpleNamespace) -> None:
    ok = '{"a":' + '[' * 199 + ']' * 199 + '}'
    assert core.parse_arguments(ok)['a'] == json.loads('[' * 199 + ']' * 199)
    too_deep = '{"a":' + '[' * 200 + '1' + ']' * 200 + '}'
    with pytest.raises(ToolArgumentsError, match='nesting deeper than 200 levels') as info:
        core.parse_arguments(too_deep)
    assert info.value.position == 205
    with pytest.raises(ToolArgumentsError, match='nesting deeper than 200 levels'):
        core.parse_arguments('[' * 100_000)


def depth_of(value: Any, depth: int = 0) -> int:
    """The depth of the deepest value (the top level is 0)."""
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return max((depth_of(c, depth + 1) for c in children), default=depth)


@pytest.mark.parametrize('mode', ['strict', 'partial', 'lenient'])
def test_max_depth(core: SimpleNamespace, mode: str) -> None:
    text = '{"a": [{"b": [1]}], "c": {}}'  # 1 is at depth 4
    assert core.parse_arguments(text, mode, max_depth=4) == json.loads(text)
    with pytest.raises(ToolArgumentsError, match=r'\(char 14\): nesting deeper than 3 levels') as info:
        core.parse_arguments(text, mode, max_depth=3)
    assert (info.value.position, info.value.line, info.value.column) == (14, 1, 15)
    with pytest.raises(ToolArgumentsError, match=r'\(char 7\): nesting deeper than 1 levels'):
        core.parse_arguments(text, mode, max_depth=1)
    assert core.parse_arguments('{"a": []}', mode, max_depth=1) == {'a': []}
    with pytest.raises(ToolArgumentsError, match='nesting deeper than 5 levels'):
        core.parse_arguments('{"a":' + '[' * 100_000, mode, max_depth=5)


def test_large_input(core: SimpleNamespace) -> None:
    big = {'items': [{'id': i, 'name': f'item {i}', 'tags': ['a', 'b'], 'score': i / 7} for i in range(30_000)]}
    text = json.dumps(big)
    assert len(text) > 1 << 20
    assert core.parse_arguments(text) == big
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments(text[:-2])
    assert info.value.position == len(text) - 2


@pytest.mark.parametrize(
    ('number', 'ok'),
    [
        ('9' * 4300, True),
        ('-' + '9' * 4300, True),
        ('9' * 4301, False),
        ('-' + '9' * 5000, False),
        ('9' * 4301 + '.5', False),  # the integer part counts, floats too (jiter's rule)
        ('9' * 5000 + 'e2', False),
        ('1.' + '1' * 10_000, True),  # long fractions and exponents are fine
        ('1e' + '1' * 5000, True),
    ],
)
def test_number_digit_limit(core: SimpleNamespace, number: str, ok: bool) -> None:
    """Repro r4: over 4300 integer digits is ToolArgumentsError at the number (was a bare ValueError
    in the twin and a meaningless position in Rust); inside a string it is just text."""
    text = '{"a": ' + number + '}'
    if ok:
        assert core.parse_arguments(text) == json.loads(text)
    else:
        with pytest.raises(ToolArgumentsError) as info:
            core.parse_arguments(text)
        assert info.value.position == 6
        assert str(info.value).startswith(
            'invalid tool arguments at line 1 column 7 (char 6): number too large (more than 4300 integer digits) near '
        )
    digits = '"' + '9' * 5000 + '"'
    assert core.parse_arguments('{"a": ' + digits + '}') == {'a': '9' * 5000}


def test_exact_integers_whatever_the_int_digit_limit(core: SimpleNamespace) -> None:
    if not hasattr(sys, 'set_int_max_str_digits'):  # Python < 3.10.7
        pytest.skip('no int digit limit')
    number = int('7' * 2000)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        got = core.parse_arguments('{"a": [-' + '7' * 2000 + ', ' + '7' * 2000 + ']}')
    finally:
        sys.set_int_max_str_digits(old)
    assert got == {'a': [-number, number]}


# --- Rust vs reference --------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


def outcome(name: str, text: str | bytes) -> tuple[str, Any]:
    try:
        return 'ok', IMPLEMENTATIONS[name].parse_arguments(text)
    except ToolArgumentsError as exc:
        return 'error', (exc.position, exc.line, exc.column, exc.excerpt, str(exc))


def check_same(text: str | bytes) -> None:
    rust, ref = outcome('rust', text), outcome('reference', text)
    assert rust == ref
    if rust[0] == 'ok':
        # Same float values bit for bit (== would hide -0.0 vs 0.0).
        assert json.dumps(rust[1]) == json.dumps(ref[1])


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=40))
def test_differential_random_text(text: str) -> None:
    check_same(text)


@settings(max_examples=500, deadline=None)
@given(value=st.dictionaries(st.text(max_size=6), json_values, max_size=5), data=st.data())
def test_differential_mutated_json(value: dict[str, Any], data: st.DataObject) -> None:
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    check_same(text)
    assert outcome('rust', text) == ('ok', value)
    if text:
        i = data.draw(st.integers(0, len(text) - 1))
        op = data.draw(st.sampled_from(['delete', 'insert', 'truncate']))
        if op == 'delete':
            mutated = text[:i] + text[i + 1 :]
        elif op == 'insert':
            mutated = text[:i] + data.draw(st.sampled_from(list('{}[]",:0-.eE \\tfnu\x01'))) + text[i:]
        else:
            mutated = text[:i]
        check_same(mutated)
        check_same(mutated.encode())


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=30))
def test_differential_random_bytes(data: bytes) -> None:
    check_same(data)


@settings(max_examples=300, deadline=None)
@given(number=st.from_regex(r'-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?', fullmatch=True))
def test_differential_numbers(number: str) -> None:
    check_same('{"n": ' + number + '}')


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.text(max_size=4), json_values, max_size=4), max_depth=st.integers(1, 6), data=st.data())
def test_differential_max_depth(value: dict[str, Any], max_depth: int, data: st.DataObject) -> None:
    text = json.dumps(value)
    cut = data.draw(st.integers(0, len(text)))
    for mode, t in [('strict', text), ('lenient', text.replace('"', "'")), ('partial', text[:cut])]:
        outcomes = []
        for name in ('rust', 'reference'):
            try:
                outcomes.append(IMPLEMENTATIONS[name].parse_arguments(t, mode, max_depth=max_depth))
            except ToolArgumentsError as exc:
                outcomes.append((exc.position, str(exc)))
        assert outcomes[0] == outcomes[1], (mode, t)
        if mode == 'strict':
            assert (outcomes[0] == value) == (depth_of(value) <= max_depth)
