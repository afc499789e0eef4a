"""parse_arguments read in one pass (strict, and partial without rewriting the text): Rust equals the twin.

The Rust core reads strict text and truncated prefixes in one pass (``rust/json/onepass.rs``);
the twin rewrites a prefix into strict JSON and parses that. Values, their types (``1`` vs ``1.0``,
``True`` vs ``1``), key order and error texts must be the same at any cut point, on escapes,
surrogate pairs, deep nesting, ``max_depth`` limits and random bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.core_fixtures import IMPLEMENTATIONS
from toolweave.exceptions import ToolArgumentsError

rust = IMPLEMENTATIONS['rust']
twin = IMPLEMENTATIONS['reference']


def typed(v: Any) -> Any:
    """``v`` with every value's type and every object's key order made part of equality."""
    if isinstance(v, dict):
        return ('dict', [(k, typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ('list', [typed(x) for x in v])
    return (type(v).__name__, v)


def outcome(impl: Any, text: str | bytes, mode: str, max_depth: int = 200) -> Any:
    try:
        return typed(impl.parse_arguments(text, mode, max_depth=max_depth))
    except ToolArgumentsError as e:
        return ('error', str(e), e.position, e.line, e.column, e.excerpt)


def same(text: str | bytes, mode: str, max_depth: int = 200) -> Any:
    got = outcome(rust, text, mode, max_depth)
    assert got == outcome(twin, text, mode, max_depth), (text, mode, max_depth)
    return got


LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec='utf-8'), max_size=8)
    | st.sampled_from(['東京都の天気', '😀 pair', 'quote " back \\ slash', 'tab\tnew\nline', '\x00\x1f'])
)
JSON = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=16,
)
DOC = st.dictionaries(st.text(max_size=6), JSON, max_size=6)


@settings(max_examples=300, deadline=None)
@given(doc=DOC, data=st.data(), ensure_ascii=st.booleans(), indent=st.sampled_from([None, 1]))
def test_every_cut_of_random_json_matches_the_twin(
    doc: dict[str, Any], data: st.DataObject, ensure_ascii: bool, indent: int | None
) -> None:
    text = json.dumps(doc, ensure_ascii=ensure_ascii, indent=indent)
    cut = data.draw(st.integers(0, len(text)))
    max_depth = data.draw(st.sampled_from([1, 2, 3, 200]))
    same(text[:cut], 'partial', max_depth)
    assert same(text, 'strict') == typed(doc)
    assert same(text, 'partial') == typed(doc)


@pytest.mark.parametrize('ensure_ascii', [True, False])
def test_all_cuts_of_an_escaped_document(ensure_ascii: bool) -> None:
    doc = {
        'q': '東京都 "quoted" \\ 😀\n\t\x01',
        'n': [0, -1, 1.5, -2.5e-300, 12345678901234567890, True, False, None],
        'o': {'': {'x': []}, 'é': [{}]},
    }
    text = json.dumps(doc, ensure_ascii=ensure_ascii)
    for cut in range(len(text) + 1):
        same(text[:cut], 'partial')
    assert same(text, 'partial') == typed(doc)


@pytest.mark.parametrize(
    ('text', 'want'),
    [
        ('{"a": 1.0, "b": 1, "c": tr', {'a': 1.0, 'b': 1}),
        ('{"a": 1e+-', {'a': 1}),
        ('{"a": 1, "a": "x', {'a': 'x'}),
        ('{"a": 1, "a": n', {'a': 1}),
        ('{"a": [[["é\\u00', {'a': [[['é']]]}),
        ('{"\\u00e9": "\\ud83d\\ude00\\ud83d', {'é': '😀'}),
    ],
)
def test_cut_values_keep_their_types(text: str, want: dict[str, Any]) -> None:
    assert same(text, 'partial') == typed(want)


@pytest.mark.parametrize(
    'text',
    [
        '{"a": 1, "\\udc00',  # a lone surrogate in a cut key: the rewriting drops the key
        '{"a": 1, "\\udc00": ',  # ... and in a dangling one
        '{"a": "\\udc00 cut',  # in a cut value: the strict error
        '{"a": 01',
        '{"a": 1}}',
        '{"a": "\x01',
        '{"a": [1, 2,]',
        '[1, 2',
        '"{\\"a\\": 1',
    ],
)
def test_odd_prefixes_match_the_twin(text: str) -> None:
    same(text, 'partial')
    same(text, 'strict')
    same(text, 'lenient')


@pytest.mark.parametrize('depth', [1, 2, 3, 199, 200, 201, 250])
@pytest.mark.parametrize('max_depth', [1, 3, 200])
def test_deep_nesting_and_max_depth(depth: int, max_depth: int) -> None:
    whole = '{"a": ' + '[' * depth + '1' + ']' * depth + '}'
    for text in (whole, whole[: 6 + depth], whole[: 6 + depth + 1], whole[:-1]):
        for mode in ('strict', 'partial'):
            same(text, mode, max_depth)


@settings(max_examples=300, deadline=None)
@given(
    doc=DOC,
    data=st.data(),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(list('{}[]",:\\ 0-.eEtfnu\x01é'))), max_size=3),
)
def test_mutated_json_matches_the_twin(doc: dict[str, Any], data: st.DataObject, edits: list[tuple[int, str]]) -> None:
    text = json.dumps(doc, ensure_ascii=data.draw(st.booleans()))
    for at, ch in edits:
        at %= len(text) + 1
        text = text[:at] + ch + text[at + data.draw(st.integers(0, 1)) :]
    for mode in ('strict', 'partial', 'lenient'):
        same(text, mode)
    same(text[: data.draw(st.integers(0, len(text)))], 'partial')


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=60), mode=st.sampled_from(['strict', 'partial', 'lenient']))
def test_random_bytes_match_the_twin(raw: bytes, mode: str) -> None:
    same(raw, mode)
    same(b'{"a": ' + raw, mode)


def test_cached_strings_are_never_confused() -> None:
    """Strings of 2 to 63 bytes come from a cache slotted by their length and ends: equal ends, other middles differ."""
    ends = ('a' * 8, 'b' * 8)
    values = [m.join(ends) for m in ('', 'x', 'y', 'xy', 'yx', 'é', '東', 'x' * 40, 'y' * 40, 'x' * 47)]
    values += ['ab', 'ba', 'aXb', 'aYb', 'abcd', 'abce', 'abcde', 'abxde', 'abcdefgh', 'abcdefgi', 'é', 'éé', '東京']
    for _ in range(2):
        for v in values:
            for text in (json.dumps({v: v}, ensure_ascii=False), json.dumps({'k': [v, v]})):
                assert rust.parse_arguments(text) == json.loads(text)
                assert rust.parse_arguments(text[:-1], 'partial') == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(keys=st.lists(st.text(max_size=20), min_size=1, max_size=8))
def test_short_keys_and_values_round_trip(keys: list[str]) -> None:
    doc = {k: [k, k[::-1]] for k in keys}
    text = json.dumps(doc, ensure_ascii=False)
    assert rust.parse_arguments(text) == doc
    assert rust.parse_arguments(text, 'partial') == doc
