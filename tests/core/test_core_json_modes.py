"""parse_arguments partial and lenient modes, object input, deep nesting: Rust and twin agree."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.core_fixtures import IMPLEMENTATIONS, load_case
from toolweave.exceptions import ToolArgumentsError


@pytest.mark.parametrize(
    ('text', 'want'),
    [
        ('{"name": "Al', {'name': 'Al'}),
        ('{"name": "Alice", "age": 3', {'name': 'Alice', 'age': 3}),
        ('{"a": [1, 2, tr', {'a': [1, 2]}),
        ('{"a": 1, "b', {'a': 1}),
        ('{"a": 1, "b": ', {'a': 1}),
        ('{"a": 1, ', {'a': 1}),
        ('{"a": -', {}),
        ('{"a": 1.5e', {'a': 1.5}),
        ('{"a": "x\\u12', {'a': 'x'}),
        ('{"a": "x\\', {'a': 'x'}),
        ('{"a": "\\ud83d', {'a': ''}),
        ('{"a": "\\ud83d\\ude00', {'a': '\U0001f600'}),
        ('{"a": {"b": [{"c": "dé', {'a': {'b': [{'c': 'dé'}]}}),
        ('{', {}),
        ('  ', {}),
        ('{"a": 1}', {'a': 1}),
    ],
)
def test_partial(core: SimpleNamespace, text: str, want: dict[str, Any]) -> None:
    assert core.parse_arguments(text, 'partial') == want
    assert core.parse_arguments(text.encode(), mode='partial') == want


@pytest.mark.parametrize('text', ['{"a": tx', '[1,', '"abc', '{"a" 1', '{"a": 1} x', '{"a": "\x01'])
def test_partial_rejects_what_is_not_a_prefix(core: SimpleNamespace, text: str) -> None:
    with pytest.raises(ToolArgumentsError) as partial:
        core.parse_arguments(text, 'partial')
    with pytest.raises(ToolArgumentsError) as strict:
        core.parse_arguments(text)
    assert str(partial.value) == str(strict.value)


def test_case_b27_partial_snapshots(core: SimpleNamespace) -> None:
    case = load_case('B27')
    fragments = [e['delta']['partial_json'] for e in case['input'] if e['type'] == 'content_block_delta']
    snapshots = [core.parse_arguments(''.join(fragments[: i + 1]), 'partial') for i in range(len(fragments))]
    assert snapshots == case['expected']['partial_snapshots']


@pytest.mark.parametrize(
    ('text', 'want'),
    [
        ('```json\n{"a": 1}\n```', {'a': 1}),
        ('Sure! Here you go:\n```\n{"a": 1}\n```\nAnything else?', {'a': 1}),
        ('The arguments are {"a": 1}. Done.', {'a': 1}),
        ('{"a": [1, 2,], "b": 3,}', {'a': [1, 2], 'b': 3}),
        ("{'a': 'it\\'s', 'b': \"q\"}", {'a': "it's", 'b': 'q'}),
        ("{'a': 'say \"hi\"'}", {'a': 'say "hi"'}),
        ("{'a': 'it's Bob's', 'b': ['x' , 'y'], 'c': 'l'}", {'a': "it's Bob's", 'b': ['x', 'y'], 'c': 'l'}),
        ("{'a': 'trailing'", {'a': 'trailing'}),
        ('{"a": 1, "b": tr', {'a': 1}),  # a truncated literal: read as partial mode does
        ('{"a": [1, nul', {'a': [1]}),
        ('{"a": True, "b": False, "c": None}', {'a': True, 'b': False, 'c': None}),
        ('{a: 1, snake_case: 2}', {'a': 1, 'snake_case': 2}),
        ('{"a": "line1\nline2\ttab\x01"}', {'a': 'line1\nline2\ttab\x01'}),
        ('{"a": {"b": 1}', {'a': {'b': 1}}),
        ('{"a": "unterminated', {'a': 'unterminated'}),
        ('{"a": 1}}', {'a': 1}),
        ('{"a": [1]]}', {'a': [1]}),
        ('{"é": "ü"}', {'é': 'ü'}),
    ],
)
def test_lenient_repairs(core: SimpleNamespace, text: str, want: dict[str, Any]) -> None:
    assert core.parse_arguments(text, 'lenient') == want


@pytest.mark.parametrize(
    ('text', 'position', 'reason'),
    [
        ('no object here', 0, 'expected a value'),
        ('{a: someword}', 1, "expected a string key or '}'"),
        ('[1, 2]', 0, 'expected a JSON object, got array'),
        ('{"a": NaN}', 6, 'expected a value'),
    ],
)
def test_lenient_gives_up_with_the_strict_error(core: SimpleNamespace, text: str, position: int, reason: str) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments(text, 'lenient')
    assert info.value.position == position
    assert f'): {reason} near ' in str(info.value)
    assert info.value.excerpt


def test_arguments_as_object(core: SimpleNamespace) -> None:
    """Case B06: Ollama sends arguments as an object; it is accepted (a copy) in every mode."""
    args = load_case('B06')['input']['tool_call']['function']['arguments']
    for mode in ('strict', 'partial', 'lenient', None):
        got = core.parse_arguments(args, mode)
        assert got == load_case('B06')['expected']['arguments'] and got is not args


def test_case_b11_empty_is_no_arguments(core: SimpleNamespace) -> None:
    for mode in ('strict', 'partial', 'lenient'):
        assert core.parse_arguments(load_case('B11')['input']['arguments'], mode) == {}


def test_bad_mode_and_type(core: SimpleNamespace) -> None:
    with pytest.raises(ValueError, match="mode must be 'strict', 'partial' or 'lenient', not 'fast'"):
        core.parse_arguments('{}', 'fast')
    with pytest.raises(TypeError, match='expects str, bytes or dict, got int'):
        core.parse_arguments(5, 'lenient')


@pytest.mark.parametrize('mode', ['strict', 'partial', 'lenient'])
@pytest.mark.parametrize('opener', ['[', '{"a":'])
def test_100k_nested_brackets_is_an_error_not_a_crash(core: SimpleNamespace, mode: str, opener: str) -> None:
    text = '{"x":' + opener * 100_000
    with pytest.raises(ToolArgumentsError, match='nesting deeper than 200 levels'):
        core.parse_arguments(text, mode)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def consistent(part: Any, full: Any) -> bool:
    """``part`` could be what a prefix of ``full``'s JSON text shows."""
    if isinstance(full, dict):
        return isinstance(part, dict) and all(k in full and consistent(v, full[k]) for k, v in part.items())
    if isinstance(full, list):
        return isinstance(part, list) and len(part) <= len(full) and all(map(consistent, part, full))
    if isinstance(full, str):
        return isinstance(part, str) and full.startswith(part)
    if isinstance(full, (int, float)) and not isinstance(full, bool):
        return isinstance(part, (int, float)) and not isinstance(part, bool)
    return part == full


@settings(max_examples=200, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=5), JSON, max_size=5), data=st.data(), ensure_ascii=st.booleans())
def test_partial_of_any_prefix_is_prefix_consistent(
    doc: dict[str, Any], data: st.DataObject, ensure_ascii: bool
) -> None:
    text = json.dumps(doc, ensure_ascii=ensure_ascii)
    cut = data.draw(st.integers(1, len(text)))
    results = [IMPLEMENTATIONS[name].parse_arguments(text[:cut], 'partial') for name in ('rust', 'reference')]
    assert results[0] == results[1]
    assert consistent(results[0], doc)
    assert IMPLEMENTATIONS['rust'].parse_arguments(text, 'partial') == doc


def outcome(name: str, text: str, mode: str) -> Any:
    try:
        return IMPLEMENTATIONS[name].parse_arguments(text, mode)
    except ToolArgumentsError as e:
        return ('error', str(e))


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list('{}[]",:\'\\ \n\tabtrufeNTF0123.-eé`u')), max_size=40),
    mode=st.sampled_from(['strict', 'partial', 'lenient']),
)
def test_fuzz_modes_rust_equals_reference(text: str, mode: str) -> None:
    assert outcome('rust', text, mode) == outcome('reference', text, mode)
