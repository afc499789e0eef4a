"""``StreamAggregator.partial_arguments`` after every fragment (incremental in Rust): Rust == twin == one-shot."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from core_fixtures import IMPLEMENTATIONS, sse_from_payloads
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave.exceptions import ToolArgumentsError

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=16,
)
LAYOUTS = st.sampled_from([{}, {'indent': 1}, {'separators': (',', ':')}, {'ensure_ascii': False}])
START = {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 't', 'name': 'f'}}


def outcome(call: Any) -> Any:
    try:
        return call()
    except ToolArgumentsError as e:
        return ('error', str(e))


def fragments_of(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({c % (len(text) + 1) for c in cuts}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def asks(name: str, fmt: str, fragments: list[str]) -> list[Any]:
    """The partial arguments of call 0 after every fragment, streamed in format ``fmt``."""
    agg = IMPLEMENTATIONS[name].StreamAggregator(fmt)
    if fmt == 'anthropic':
        agg.feed(sse_from_payloads([{**START, 'content_block': {**START['content_block'], 'input': {}}}]))
    seen = []
    for f in fragments:
        if fmt == 'anthropic':
            event: dict[str, Any] = {
                'type': 'content_block_delta',
                'index': 0,
                'delta': {'type': 'input_json_delta', 'partial_json': f},
            }
        else:
            call = {'index': 0, 'id': 'c', 'type': 'function', 'function': {'name': 'f', 'arguments': f}}
            event = {'choices': [{'index': 0, 'delta': {'tool_calls': [call]}}]}
        agg.feed(sse_from_payloads([event]))
        seen.append(outcome(lambda: agg.partial_arguments(0)))
    return seen


def one_shot(name: str, fragments: list[str]) -> list[Any]:
    parse = IMPLEMENTATIONS[name].parse_arguments
    prefixes = [''.join(fragments[: i + 1]) for i in range(len(fragments))]
    return [outcome(lambda p=p: parse(p, 'partial')) for p in prefixes]


@settings(max_examples=150, deadline=None)
@given(
    doc=st.dictionaries(st.text(max_size=6), JSON, max_size=6),
    layout=LAYOUTS,
    cuts=st.lists(st.integers(0, 10**6), max_size=40),
    fmt=st.sampled_from(['anthropic', 'openai-chat']),
    tail=st.sampled_from(['', ' ', 'x', ',', '}', ']', '"', '\\', ', "k": tru', '{"a": 1}']),
)
def test_partial_after_every_fragment_equals_one_shot(
    doc: dict[str, Any], layout: dict[str, Any], cuts: list[int], fmt: str, tail: str
) -> None:
    fragments = fragments_of(json.dumps(doc, **layout) + tail, cuts)
    expected = one_shot('rust', fragments)
    assert one_shot('reference', fragments) == expected
    assert asks('rust', fmt, fragments) == expected
    assert asks('reference', fmt, fragments) == expected
    if not tail.strip():
        assert expected[-1] == doc


@pytest.mark.parametrize(
    'text',
    [
        '{"a": [1, 2.5e3, -0, true, false, null, "x\\u00e9\\ud83d\\ude00"], "b": {"c": {}}, "d": []}',
        '  {"a" : { "b" : [ [ ], { } ] } , "e":"\\"q\\""}  ',
        '{"big": 123456789012345678901234567890, "f": 1E+2, "u": "\\ud800"}',
        '{"a": 01}',
        '{"a": 1}{',
        '[1, 2]',
        '{"a":' + '[' * 150 + ']' * 150 + '}',
    ],
)
def test_partial_after_every_byte_equals_one_shot(text: str) -> None:
    fragments = list(text)
    expected = one_shot('rust', fragments)
    assert one_shot('reference', fragments) == expected
    for fmt in ('anthropic', 'openai-chat'):
        assert asks('rust', fmt, fragments) == expected
        assert asks('reference', fmt, fragments) == expected


def test_completed_values_are_returned_unchanged_after_the_stream() -> None:
    fragments = fragments_of('{"a": [{"b": "c"}], "d": 1}', [3, 9, 14, 20])
    seen = asks('rust', 'anthropic', fragments)
    assert seen[-1] == {'a': [{'b': 'c'}], 'd': 1}
    assert seen[-2] == {'a': [{'b': 'c'}]}
    assert seen[0] == {}


def test_asking_again_without_new_text_returns_the_same_result() -> None:
    agg = IMPLEMENTATIONS['rust'].StreamAggregator('anthropic')
    agg.feed(sse_from_payloads([{**START, 'content_block': {**START['content_block'], 'input': {}}}]))
    delta = {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': ''}}
    agg.feed(sse_from_payloads([{**delta, 'delta': {**delta['delta'], 'partial_json': '{"a": [1, "x'}}]))
    first = agg.partial_arguments(0)
    assert first == {'a': [1, 'x']}
    assert agg.partial_arguments(0) is first  # no new text: the cached result
    agg.feed(b'event: ping\ndata: {"type":"ping"}\n\n')  # an event that adds no argument text
    assert agg.partial_arguments(0) is first
    agg.feed(sse_from_payloads([{**delta, 'delta': {**delta['delta'], 'partial_json': 'y"]}'}}]))
    last = agg.partial_arguments(0)
    assert last == {'a': [1, 'xy']} and last is not first
    assert first == {'a': [1, 'x']}  # an earlier result is never changed by later text
