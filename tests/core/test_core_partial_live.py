"""``PartialArguments`` and ``partial_arguments(i, live=True)``: the live partial value, Rust and twin.

After every fragment the live value equals the one-shot ``parse_arguments(text_so_far, 'partial')``, and
the same objects are updated in place (the identity contract of ``PartialArguments.feed``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.core_fixtures import IMPLEMENTATIONS, sse_from_payloads
from test_core_partial_incremental import JSON, LAYOUTS, SHAPES, fragments_by_sizes, fragments_of
from toolweave.exceptions import ToolArgumentsError

ONE_SHOT = IMPLEMENTATIONS['rust'].parse_arguments


def outcome(call: Any) -> Any:
    try:
        return call()
    except ToolArgumentsError as e:
        return ('error', str(e), e.position)


def one_shot(text: str, max_depth: int = 200) -> Any:
    return outcome(lambda: ONE_SHOT(text, 'partial', max_depth=max_depth))


def containers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every dict/list in ``value`` with its path (keys and indexes)."""
    if isinstance(value, (dict, list)):
        yield path, value
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            yield from containers(v, (*path, k))


class Follower:
    """Feeds one parser and checks the contract after every fragment."""

    def __init__(self, core: SimpleNamespace, max_depth: int = 200) -> None:
        self.parser = core.PartialArguments(max_depth)
        self.max_depth = max_depth
        self.root: dict[str, Any] | None = None
        self.seen: dict[tuple[Any, ...], Any] = {}  # container objects by path (kept alive: ids stay unique)
        self.failed = False

    def feed(self, fragment: str) -> Any:
        got = outcome(lambda: self.parser.feed(fragment))
        expected = one_shot(self.parser.text, self.max_depth)
        assert got == expected, self.parser.text
        if isinstance(got, tuple):
            assert self.parser.value is None
            self.failed = True
            return got
        assert self.parser.value is got
        if self.root is None:
            self.root = got
        elif not self.failed:
            assert got is self.root  # the live value: one dict for the whole stream
            for path, obj in containers(got):
                old = self.seen.get(path)
                assert old is None or old is obj or not isinstance(old, type(obj)), path
        self.seen.update(containers(got))
        return got


def follow(core: SimpleNamespace, fragments: list[str], max_depth: int = 200) -> Follower:
    f = Follower(core, max_depth)
    for fragment in fragments:
        f.feed(fragment)
    assert f.parser.text == ''.join(fragments)
    return f


@settings(max_examples=60, deadline=None)
@given(
    doc=SHAPES,
    layout=LAYOUTS,
    sizes=st.lists(st.integers(1, 16), min_size=1, max_size=8),
    tail=st.sampled_from(['', ' ', 'x', '"', '\\', '\\u00', '{', ', "z": [1, {"q": "r']),
)
def test_live_value_after_every_fragment_equals_one_shot(
    doc: dict[str, Any], layout: dict[str, Any], sizes: list[int], tail: str
) -> None:
    text = json.dumps(doc, **layout) + tail
    fragments = fragments_by_sizes(text, sizes)
    rust = follow(IMPLEMENTATIONS['rust'], fragments)
    if not tail:
        assert rust.root == doc and rust.parser.value is rust.root
    if len(text) <= 1500:  # the twin re-parses the whole text per fragment (quadratic)
        follow(IMPLEMENTATIONS['reference'], fragments)


@pytest.mark.parametrize('name', ['rust', 'reference'])
@settings(max_examples=150, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=6), JSON, max_size=6), layout=LAYOUTS, data=st.data())
def test_containers_keep_their_identity_while_in_place(name: str, doc: Any, layout: Any, data: Any) -> None:
    text = json.dumps(doc, **layout)
    fragments = fragments_of(text, data.draw(st.lists(st.integers(0, 10**6), max_size=30)))
    f = follow(IMPLEMENTATIONS[name], fragments)
    assert f.root == doc


def test_long_string_array_and_deep_nesting_at_every_character(core: Any) -> None:
    nested: Any = 'leaf \\u00e9'
    for level in range(199):
        nested = [nested] if level % 2 else {'k': level, 'c': nested}
    docs = [
        {'text': 'abcdéfgh😀\n"\\' * 100},
        {'xs': list(range(600)), 'fs': [1.5, -2e-3, 0] * 50},
        {'top': nested},
        {'items': [{'id': i, 'name': f'n{i}', 'ok': i % 2 == 0, 'none': None} for i in range(60)]},
    ]
    size = 1 if core.name == 'rust' else 7  # the twin re-parses the whole text per fragment
    for doc in docs:
        text = json.dumps(doc)
        f = follow(core, [text[i : i + size] for i in range(0, len(text), size)])
        assert f.root == json.loads(text)


@pytest.mark.parametrize(
    'text',
    [
        '{"a": "x\\u00e9\\ud83d\\ude00y\\n\\"\\\\\\/\\b\\f\\r\\t", "b": ["\\ud83d\\ude00"], "\\u00e9\\ud83d\\ude00": 1}',
        '{"a": "\\ud83d\\ud83d\\ude00"}',
        '{"a": "\\ud83dx"}',
        '{"a": "\\ude00"}',
        '{"a": "\\x"}',
        '{"a": 01, "b": 1}',
        '{"a": 1.5e+-3}',
        '{"a": tru}',
        '{"a": [1, 2,]}',
        '{"a": 1}{"b": 2}',
        '[1, 2]',
        '"abc"',
        '{"a": 1, "a": {"b": [1, 2]}, "c": 3}',
        '  \n {"a" : { "b" : [ [ ], { } ] } , "e":"\\"q\\""}  ',
        '{"big": 123456789012345678901234567890, "n": -0, "m": -12, "f": 1E+2}',
    ],
)
def test_escapes_and_errors_split_at_every_character(core: Any, text: str) -> None:
    follow(core, list(text))
    follow(core, [text[i : i + 5] for i in range(0, len(text), 5)])


def test_utf8_split_in_a_stream_live_partial_after_every_byte(core: Any) -> None:
    args = json.dumps({'city': 'Zürich 東京 😀', 'days': [1, 2], 'note': 'é\\u00e9'}, ensure_ascii=False)
    start = {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 't', 'name': 'f'}}
    start['content_block']['input'] = {}
    deltas = [
        {
            'type': 'content_block_delta',
            'index': 0,
            'delta': {'type': 'input_json_delta', 'partial_json': args[i : i + 3]},
        }
        for i in range(0, len(args), 3)
    ]
    body = sse_from_payloads([start, *deltas])
    agg = core.StreamAggregator('anthropic')
    root = None
    for i in range(len(body)):  # one byte at a time: every multi-byte character split
        agg.feed(body[i : i + 1])
        calls = agg.result()['tool_calls']
        if not calls:
            continue
        live = agg.partial_arguments(0, live=True)
        assert live == one_shot(calls[0]['arguments'])
        root = live if root is None else root
        assert live is root
        snapshot = agg.partial_arguments(0)
        assert snapshot == live and snapshot is not live
    assert root == json.loads(args)


def test_live_and_snapshot_asks_mix(core: Any) -> None:
    agg = core.StreamAggregator('openai-chat')

    def fragment(text: str) -> bytes:
        call = {'index': 0, 'id': 'c', 'type': 'function', 'function': {'name': 'f', 'arguments': text}}
        return sse_from_payloads([{'choices': [{'index': 0, 'delta': {'tool_calls': [call]}}]}])

    agg.feed(fragment('{"a": [1, "x'))
    live = agg.partial_arguments(0, live=True)
    snap = agg.partial_arguments(0)
    agg.feed(fragment('y"], "b": {"c": 2'))
    assert agg.partial_arguments(0, live=True) is live
    assert live == {'a': [1, 'xy'], 'b': {'c': 2}}
    assert snap == {'a': [1, 'x']}  # a snapshot never changes
    assert agg.partial_arguments(0) == live


def test_first_feed_creates_the_value_and_blank_text_is_filled_in_place(core: Any) -> None:
    p = core.PartialArguments()
    assert p.value is None and p.text == '' and p.max_depth == 200
    blank = p.feed('  ')
    assert blank == {} and p.value is blank
    assert p.feed('') is blank
    assert p.feed('{"a": ') is blank and blank == {}
    assert p.feed('{"b": 1}') is blank and blank == {'a': {'b': 1}}
    inner = blank['a']
    assert p.feed(', "c": [') is blank and blank['a'] is inner
    assert p.feed(']}') is blank and blank == {'a': {'b': 1}, 'c': []}


def test_a_kept_string_or_snapshot_never_changes(core: Any) -> None:
    p = core.PartialArguments()
    v = p.feed('{"s": "abc')
    kept = v['s']
    snapshot = copy.deepcopy(v)
    p.feed('déf')
    assert kept == 'abc' and snapshot == {'s': 'abc'}
    assert v == {'s': 'abcdéf'}
    for piece in ['g' * 1000, '😀', 'h']:  # grows in place while nothing else holds it
        p.feed(piece)
    assert v == {'s': 'abcdéf' + 'g' * 1000 + '😀h'}
    items = p.feed('", "xs": [1, "t')
    first = items['xs']
    kept = first[1]
    p.feed('u", 2')
    assert kept == 't' and first == [1, 'tu', 2] and items['xs'] is first


def test_an_error_gives_the_live_value_up(core: Any) -> None:
    p = core.PartialArguments()
    v = p.feed('{"a": [1, 2], "b": ')
    with pytest.raises(ToolArgumentsError) as e:
        p.feed('x}')
    assert (str(e.value), e.value.position) == one_shot('{"a": [1, 2], "b": x}')[1:]
    assert p.value is None
    assert v['a'] == [1, 2]
    for more in [' more', ' text that is longer than twenty characters', '}']:
        with pytest.raises(ToolArgumentsError) as e:
            p.feed(more)
        assert ('error', str(e.value), e.value.position) == one_shot(p.text)
        assert p.value is None


def test_lone_surrogates_raise_the_one_shot_error_and_text_keeps_them(core: Any) -> None:
    f = Follower(core)
    assert f.feed('{"a": "x') == {'a': 'x'}
    for fragment in ['\ud83d', '\ude00', '"}', ' ' * 30]:
        assert isinstance(f.feed(fragment), tuple)
    assert f.parser.text == '{"a": "x\ud83d\ude00"}' + ' ' * 30
    assert f.parser.value is None


def test_max_depth_as_the_one_shot_parse(core: Any) -> None:
    def nested(levels: int) -> str:
        return '{"a": ' + '[' * levels + '1' + ']' * levels + '}'

    for limit in [1, 5, 200]:
        follow(core, list(nested(limit - 1)), limit)
        f = follow(core, list(nested(limit)), limit)
        assert f.failed
    for bad in [0, 201, True, 1.5, '5']:
        with pytest.raises(ValueError, match='PartialArguments\\(\\) max_depth must be an int from 1 to 200'):
            core.PartialArguments(bad)
    assert core.PartialArguments(None).max_depth == 200


def test_fragments_must_be_str(core: Any) -> None:
    p = core.PartialArguments()
    for bad in [b'{}', None, 1]:
        with pytest.raises(TypeError, match=f'PartialArguments.feed\\(\\) expects str, got {type(bad).__name__}'):
            p.feed(bad)
    assert p.text == '' and p.value is None
