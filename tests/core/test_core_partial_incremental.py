"""``StreamAggregator.partial_arguments`` after every fragment (incremental in Rust): Rust == twin == one-shot."""

from __future__ import annotations

import bisect
import functools
import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.core_fixtures import IMPLEMENTATIONS, sse_from_payloads
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


# Long strings, long arrays, deep nesting and many objects, made of characters that become escapes
# (``\u00e9``, surrogate pairs ``\ud83d\ude00``, ``\"``, ``\\``, ``\n``, ``\u0000``) or multi-byte
# UTF-8 in the text, cut into fragments of 1 to 16 characters: every escape gets split somewhere.
TRICKY = st.sampled_from(['a', ' ', 'é', '😀', '中', '"', '\\', '/', '\n', '\t', '\x00', '\x1f', '\u2028', '\ue000'])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(TRICKY, max_size=4)
)


def nested(levels: int, content: str, arrays: bool) -> dict[str, Any]:
    """``levels`` containers under the top-level object (the leaf scalar at depth ``levels + 1``), content at each."""
    value: Any = content
    for level in reversed(range(levels)):
        value = [level, content, value] if arrays and level % 2 else {'k': level, 's': content, 'c': value}
    return {'top': value}


SHAPES = st.one_of(
    st.builds(lambda s: {'text': s, 'after': 1}, st.text(TRICKY, max_size=400)),
    st.builds(lambda xs: {'xs': xs}, st.lists(SCALARS, max_size=300)),
    st.builds(nested, st.integers(1, 199), st.text(TRICKY, max_size=3), st.booleans()),
    st.builds(
        lambda items: {'items': items}, st.lists(st.dictionaries(st.text(TRICKY, max_size=4), JSON), max_size=30)
    ),
    st.builds(lambda k: {k: 'v', ' ' * 40: k}, st.text(TRICKY, min_size=50, max_size=200)),
)


def fragments_by_sizes(text: str, sizes: list[int]) -> list[str]:
    out, i = [], 0
    for size in itertools.cycle(sizes):
        if i >= len(text):
            return out
        out.append(text[i : i + size])
        i += size
    raise AssertionError('unreachable')


@settings(max_examples=80, deadline=None)
@given(
    doc=SHAPES,
    layout=LAYOUTS,
    sizes=st.lists(st.integers(1, 16), min_size=1, max_size=8),
    fmt=st.sampled_from(['anthropic', 'openai-chat']),
    tail=st.sampled_from(['', ' ', 'x', '"', '\\', '\\u00', '{']),
)
def test_long_and_deep_shapes_after_every_fragment_equal_one_shot(
    doc: dict[str, Any], layout: dict[str, Any], sizes: list[int], fmt: str, tail: str
) -> None:
    text = json.dumps(doc, **layout) + tail
    fragments = fragments_by_sizes(text, sizes)
    expected = one_shot('rust', fragments)
    assert asks('rust', fmt, fragments) == expected
    # The twin re-parses every prefix (quadratic): compared on a sample of them, and on its own asks when short.
    sample = [i for i in range(len(fragments)) if i % 13 == 0 or i == len(fragments) - 1]
    twin_prefixes = [''.join(fragments[: i + 1]) for i in sample]
    parse = IMPLEMENTATIONS['reference'].parse_arguments
    assert [outcome(lambda p=p: parse(p, 'partial')) for p in twin_prefixes] == [expected[i] for i in sample]
    if len(fragments) <= 60:
        assert asks('reference', fmt, fragments) == expected
    if not tail:
        assert expected[-1] == doc


def anthropic_asks(name: str, fragments: list[str], max_depth: int) -> list[Any]:
    agg = IMPLEMENTATIONS[name].StreamAggregator('anthropic', max_depth=max_depth)
    agg.feed(sse_from_payloads([{**START, 'content_block': {**START['content_block'], 'input': {}}}]))
    seen = []
    for f in fragments:
        delta = {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': f}}
        agg.feed(sse_from_payloads([delta]))
        seen.append(outcome(lambda: agg.partial_arguments(0)))
    return seen


@settings(max_examples=60, deadline=None)
@given(
    levels=st.integers(0, 10),
    max_depth=st.integers(2, 8),
    leaf=st.sampled_from(['"x"', '1', '-', 'tr', '[]', '{}', '{"a"', '']),
    sizes=st.lists(st.integers(1, 5), min_size=1, max_size=4),
)
def test_nesting_around_max_depth_after_every_fragment_equals_one_shot(
    levels: int, max_depth: int, leaf: str, sizes: list[int]
) -> None:
    text = '{"a": ' + '[{"b": ' * (levels // 2) + '[' * (levels % 2) + leaf
    fragments = fragments_by_sizes(text, sizes)
    prefixes = [''.join(fragments[: i + 1]) for i in range(len(fragments))]
    for name in IMPLEMENTATIONS:
        parse = IMPLEMENTATIONS[name].parse_arguments
        expected = [outcome(functools.partial(parse, p, 'partial', max_depth=max_depth)) for p in prefixes]
        assert anthropic_asks(name, fragments, max_depth) == expected


@settings(max_examples=40, deadline=None)
@given(
    doc=SHAPES,
    sizes=st.lists(st.integers(1, 16), min_size=1, max_size=6),
    reads=st.lists(st.integers(1, 9), min_size=1, max_size=6),
)
def test_reads_that_split_utf8_characters_ask_the_arguments_received_so_far(
    doc: dict[str, Any], sizes: list[int], reads: list[int]
) -> None:
    """Raw UTF-8 in the SSE body (``ensure_ascii=False``), read in pieces that split characters anywhere."""
    fragments = fragments_by_sizes(json.dumps(doc, ensure_ascii=False), sizes)[:150]
    events = [
        b'data: '
        + json.dumps(
            {
                'choices': [
                    {'index': 0, 'delta': {'tool_calls': [{'index': 0, 'id': 'c', 'function': {'arguments': f}}]}}
                ]
            },
            ensure_ascii=False,
        ).encode()
        + b'\n\n'
        for f in fragments
    ]
    ends = list(itertools.accumulate(len(e) for e in events))  # body offset after each event
    body = b''.join(events)
    bounds = [b for b in itertools.accumulate(itertools.islice(itertools.cycle(reads), len(body))) if b < len(body)]
    for name, impl in IMPLEMENTATIONS.items():
        agg = impl.StreamAggregator('openai-chat')
        for a, b in itertools.pairwise([0, *bounds, len(body)]):
            agg.feed(body[a:b])
            complete = bisect.bisect_right(ends, b)  # events fed whole so far
            if complete == 0:
                with pytest.raises(IndexError, match='no tool call at index 0'):
                    agg.partial_arguments(0)
            elif name == 'rust' or b == ends[complete - 1]:  # the twin (re-parsing) only at event ends
                text = ''.join(fragments[:complete])
                expected = outcome(functools.partial(impl.parse_arguments, text, 'partial'))
                assert outcome(functools.partial(agg.partial_arguments, 0)) == expected, name
        assert agg.result()['tool_calls'][0]['arguments'] == ''.join(fragments)


@pytest.mark.parametrize(
    'text',
    [
        '{"\\u00e9\\ud83d\\ude00k": "\\ud83d\\ude00\\u00e9", "\\"": "\\\\\\/\\b\\f\\n\\r\\t"}',
        '{"a": "\\ud83d\\ud83d\\ude00"}',
        '{"a": "x\\ud83dy"}',
        '{"a": "\\ude00"}',
        '{"a": "\\ud83d\\u0041"}',
        '{"a": "\\u12G4"}',
        '{"a": "\\x"}',
        '{"\\ud83d": 1}',
        '{"a": 1.5e+-3}',
        '{"a": "é😀中", "b": [1, "😀"]}',
        '{"a":' + '{"s":"\\u00e9","c":' * 150 + 'null' + '}' * 150 + '}',
        '{"a":' + '[' * 199 + '1' + ']' * 199 + '}',
        '{"a":' + '[' * 200 + '1' + ']' * 200 + '}',
        '{' + ' ' * 300 + '"a"' + '\n' * 300 + ':' + '\t' * 300 + '"b"' + ' ' * 300 + '}',
    ],
)
def test_escapes_and_depth_split_at_every_character_equal_one_shot(text: str) -> None:
    fragments = list(text)
    expected = one_shot('rust', fragments)
    for fmt in ('anthropic', 'openai-chat'):
        assert asks('rust', fmt, fragments) == expected
    # The twin re-parses every prefix (quadratic in pure Python): every 7th prefix and the whole text.
    parse = IMPLEMENTATIONS['reference'].parse_arguments
    sample = [*range(0, len(text), 7), len(text) - 1]
    assert [outcome(lambda i=i: parse(text[: i + 1], 'partial')) for i in sample] == [expected[i] for i in sample]


def test_open_string_is_extended_without_changing_earlier_results() -> None:
    agg = IMPLEMENTATIONS['rust'].StreamAggregator('anthropic')
    agg.feed(sse_from_payloads([{**START, 'content_block': {**START['content_block'], 'input': {}}}]))
    seen = []
    for f in ['{"t": "ab', '\\u00', 'e9\\ud83d', '\\ude00c', '", "n": [1', ', {"x": "y"}', ']}']:
        delta = {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': f}}
        agg.feed(sse_from_payloads([delta]))
        seen.append(agg.partial_arguments(0))
    assert seen == [
        {'t': 'ab'},
        {'t': 'ab'},
        {'t': 'abé'},
        {'t': 'abé😀c'},
        {'t': 'abé😀c', 'n': [1]},
        {'t': 'abé😀c', 'n': [1, {'x': 'y'}]},
        {'t': 'abé😀c', 'n': [1, {'x': 'y'}]},
    ]
    assert seen[5]['n'][1] is seen[6]['n'][1]  # a closed container is shared, never rebuilt


LONG_AFTER = ', "pad": "' + 'abcdéfgh😀' * 8 + '"}'


@pytest.mark.parametrize(
    ('text', 'max_depth'),
    [
        ('{"a": "\\ud83dx' + LONG_AFTER, 200),  # a lone surrogate, then more text
        ('{"a": 01' + LONG_AFTER, 200),
        ('{"a": 1}' + ' ' * 30 + 'x' + LONG_AFTER, 200),  # trailing data
        ('{"a": [1 2' + LONG_AFTER, 200),
        ('{"a": "x\x01y' + LONG_AFTER, 200),  # a raw control character
        ('[1, 2]' + ' ' * 40 + LONG_AFTER, 200),  # not an object, then not JSON at all
        ('"' + 'x' * 40 + '"' + LONG_AFTER, 200),
        ('{"a": [[[[[' + '1' + LONG_AFTER, 3),  # too deep for the limit
        ('{"a": ' + '[' * 30 + LONG_AFTER, 200),
    ],
)
def test_an_error_followed_by_more_text_is_the_one_shot_error_at_every_ask(text: str, max_depth: int) -> None:
    prefixes = [text[: i + 1] for i in range(len(text))]
    for name, impl in IMPLEMENTATIONS.items():
        expected = [
            outcome(functools.partial(impl.parse_arguments, p, 'partial', max_depth=max_depth)) for p in prefixes
        ]
        assert anthropic_asks(name, list(text), max_depth) == expected
        assert isinstance(expected[-1], tuple)  # the whole text is an error
