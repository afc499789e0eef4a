"""StreamAggregator (openai-chat): corpus streams, splits, bad input, and Rust vs reference."""

from __future__ import annotations

import array
import json
import math
import os
import pickle
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
import toolweave._core
import toolweave._native
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.core_fixtures import IMPLEMENTATIONS, corpus_streams, load_case, load_stream, sse_from_payloads
from toolweave.exceptions import ProviderStreamError, StreamFormatError, ToolArgumentsError

STREAMS = corpus_streams()
REQUIRED = [n for n in STREAMS if n[:3] in {'001', '002', '021', '022', '023'}]
ERROR_STREAMS = {n for n in STREAMS if n.startswith('004')}
RESULT_KEYS = [
    'format',
    'id',
    'model',
    'text',
    'reasoning',
    'tool_calls',
    'finish_reason',
    'normalized_finish_reason',
    'usage',
    'truncated',
    'chunks',
    'blocks',
    'choices',
]


def run(core: SimpleNamespace, pieces: list[bytes]) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Feed pieces then finish; return (result, all chunks, names of the exceptions raised)."""
    agg = core.StreamAggregator()
    chunks: list[dict[str, Any]] = []
    errors: list[str] = []
    for piece in [*pieces, None]:
        try:
            chunks += agg.feed(piece) if piece is not None else agg.finish()
        except (StreamFormatError, ProviderStreamError) as exc:
            chunks += exc.chunks
            errors.append(type(exc).__name__)
    return agg.result(), chunks, errors


def check_expected(core: SimpleNamespace, result: dict[str, Any], expected: dict[str, Any]) -> None:
    assert list(result) == RESULT_KEYS
    assert result['id'] == expected['response_id']
    assert result['model'] == expected['model']
    assert result['text'] == expected['text']
    assert result['reasoning'] == expected['reasoning']
    assert result['finish_reason'] == expected['finish_reason']
    assert result['usage'] == expected['usage']
    got = [(c['id'], c['name'], c['arguments'], core.parse_arguments(c['arguments'])) for c in result['tool_calls']]
    want = [(c['id'], c['name'], c['arguments_raw'], c['arguments']) for c in expected['tool_calls']]
    assert got == want
    assert all(c['type'] == 'function' for c in result['tool_calls'])
    assert [c['index'] for c in result['tool_calls']] == list(range(len(result['tool_calls'])))


@pytest.mark.parametrize('name', STREAMS)
def test_corpus_whole(core: SimpleNamespace, name: str) -> None:
    body, expected = load_stream(name)
    result, chunks, errors = run(core, [body])
    check_expected(core, result, expected)
    n_json = sum(1 for line in body.splitlines() if line.startswith(b'data: {'))
    if name in ERROR_STREAMS:
        assert errors == ['ProviderStreamError']
        assert result['truncated'] is True
        assert len(chunks) == result['chunks'] == n_json - 1
    else:
        assert errors == []
        assert len(chunks) == result['chunks'] == n_json
        assert result['truncated'] is False
    assert chunks[0]['id'] == expected['response_id']


@pytest.mark.parametrize('name', STREAMS)
def test_corpus_line_by_line(core: SimpleNamespace, name: str) -> None:
    body, expected = load_stream(name)
    whole = run(core, [body])
    lines = body.splitlines(keepends=True)
    assert run(core, lines) == whole
    check_expected(core, whole[0], expected)


@pytest.mark.parametrize('name', STREAMS)
def test_corpus_every_split(core: SimpleNamespace, name: str) -> None:
    """Two pieces, split at every byte offset (every 3rd for the long extra streams)."""
    body, _ = load_stream(name)
    whole = run(core, [body])
    step = 1 if name in REQUIRED or len(body) < 6000 else 3
    for i in range(0, len(body) + 1, step):
        assert run(core, [body[:i], body[i:]]) == whole, f'split at {i}'


@pytest.mark.parametrize('name', REQUIRED)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_corpus_random_splits(core: SimpleNamespace, name: str, data: st.DataObject) -> None:
    body, expected = load_stream(name)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=40)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    result, _chunks, errors = run(core, pieces)
    check_expected(core, result, expected)
    assert errors == []


def test_crlf_and_cr_line_endings(core: SimpleNamespace) -> None:
    body, _expected = load_stream(REQUIRED[1])
    want = run(core, [body])
    for eol in (b'\r\n', b'\r'):
        converted = body.replace(b'\n', eol)
        assert run(core, [converted]) == want
        assert run(core, [converted[i : i + 7] for i in range(0, len(converted), 7)]) == want


def test_split_inside_utf8_character(core: SimpleNamespace) -> None:
    body, expected = load_stream('023-llamacpp-gemma270m-answer-after-tool')
    at = body.index('č'.encode()) + 1  # between the two bytes of 'č'
    result, _, _ = run(core, [body[:at], body[at:]])
    assert result['text'] == expected['text'] == 'It is 18 C in Paris. čp'
    one_byte = run(core, [body[i : i + 1] for i in range(len(body))])
    assert one_byte[0]['text'] == expected['text']


def test_feed_returns_only_completed_chunks(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator()
    assert agg.format == 'openai-chat'
    assert agg.feed(b'data: {"id": "a", "choi') == []
    assert agg.feed(b'ces": []}\n') == []
    assert agg.feed(b'\n') == [{'id': 'a', 'choices': []}]
    assert agg.feed(b'data: {"choices": [{"index": 0, "delta": {"content": "x"}}]}') == []
    assert agg.result()['text'] == ''  # result() does not flush
    assert agg.result()['chunks'] == 1
    assert agg.finish() == [{'choices': [{'index': 0, 'delta': {'content': 'x'}}]}]
    assert agg.finish() == []  # idempotent
    assert agg.result()['text'] == 'x'
    assert agg.result()['truncated'] is True


def test_ignored_lines_and_fields(core: SimpleNamespace) -> None:
    body = (
        b'\xef\xbb\xbf: keep-alive comment\n\n'
        b'id: 7\nretry: 1000\nevent: message\nfoo: bar\ndata: {"choices":[{"index":0,\n'
        b'data: "delta":{"content":"a"}}]}\n\n'
        b'data:\n\n'
        b'event: ping\n\n'
        b'data:    \n\n'
        b'data: [DONE]\n\n'
    )
    result, chunks, errors = run(core, [body])
    assert errors == []
    assert chunks == [{'choices': [{'index': 0, 'delta': {'content': 'a'}}]}]
    assert result == {
        'format': 'openai-chat',
        'id': None,
        'model': None,
        'text': 'a',
        'reasoning': None,
        'tool_calls': [],
        'finish_reason': None,
        'normalized_finish_reason': None,
        'usage': None,
        'truncated': False,
        'chunks': 1,
        'blocks': [],
        'choices': [],
    }


def test_multiline_data_joined_with_newline(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator()
    chunks = agg.feed(b'data: {"choices":\ndata: [], "x": "a"}\n\n')
    assert chunks == [{'choices': [], 'x': 'a'}]


def test_reasoning_variants(core: SimpleNamespace) -> None:
    payloads = [
        {'choices': [{'index': 0, 'delta': {'reasoning_content': 'a', 'content': None}}]},
        {'choices': [{'index': 0, 'delta': {'reasoning': 'b'}}]},
        {'choices': [{'index': 0, 'delta': {'reasoning_content': None, 'content': 'c'}}]},
    ]
    result, _, _ = run(core, [sse_from_payloads(payloads)])
    assert (result['reasoning'], result['text']) == ('ab', 'c')
    result, _, _ = run(core, [sse_from_payloads([{'choices': [{'index': 0, 'delta': {'reasoning': ''}}]}])])
    assert result['reasoning'] == ''


def test_id_name_not_overwritten_and_index_zero(core: SimpleNamespace) -> None:
    def frag(**kw: Any) -> dict[str, Any]:
        return {'choices': [{'index': 0, 'delta': {'tool_calls': [kw]}}]}

    payloads = [
        frag(index=1, id='b', type='function', function={'name': 'g', 'arguments': '{'}),
        frag(index=0, id='a', function={'name': 'f', 'arguments': ''}),
        frag(index=1, id='', type='', function={'name': '', 'arguments': '}'}),
        frag(index=0, function={'name': None, 'arguments': '[]'}),
        frag(index=0, id='other', function={'name': 'h'}),  # another id at index 0: another call (issue 12)
        {'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'tool_calls'}]},
        {'choices': [{'index': 0, 'delta': {}, 'finish_reason': None}]},
    ]
    result, _, _ = run(core, [sse_from_payloads(payloads)])
    assert result['tool_calls'] == [  # in order of index (issue 12)
        {'index': 0, 'id': 'a', 'type': 'function', 'name': 'f', 'arguments': '[]'},
        {'index': 1, 'id': 'b', 'type': 'function', 'name': 'g', 'arguments': '{}'},
        {'index': 2, 'id': 'other', 'type': 'function', 'name': 'h', 'arguments': ''},
    ]
    assert result['finish_reason'] == 'tool_calls'
    assert result['truncated'] is False


def test_fragments_without_index(core: SimpleNamespace) -> None:
    def frag(**kw: Any) -> dict[str, Any]:
        return {'choices': [{'index': 0, 'delta': {'tool_calls': [kw]}}]}

    payloads = [
        frag(id='x', function={'name': 'f', 'arguments': '{"a"'}),
        frag(function={'arguments': ': 1}'}),
        frag(id='y', function={'name': 'g', 'arguments': ''}),
        frag(id='x', function={'arguments': ' '}),
        frag(index=None, id='', function={'arguments': '{}'}),
    ]
    result, _, _ = run(core, [sse_from_payloads(payloads)])
    assert [(c['index'], c['id'], c['name'], c['arguments']) for c in result['tool_calls']] == [
        (0, 'x', 'f', '{"a": 1} '),
        (1, 'y', 'g', '{}'),
    ]


def calls_of(core: SimpleNamespace, fragments: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    payload = {'choices': [{'delta': {'tool_calls': fragments}}]}
    result, _, errors = run(core, [sse_from_payloads([payload])])
    assert errors == []
    return [(c['index'], c['id'], c['arguments']) for c in result['tool_calls']]


@pytest.mark.parametrize('index', [-1, -(2**63), 2**63, 2**64, 1.0, '1', True, None])
def test_index_that_is_not_a_non_negative_int64_is_no_index(core: SimpleNamespace, index: Any) -> None:
    """Only 0 .. 2**63-1 is an index; anything else merges like a fragment without index."""
    fragments = [
        {'index': index, 'id': 'a', 'function': {'arguments': '1'}},
        {'index': index, 'function': {'arguments': '2'}},
        {'index': index, 'id': 'b', 'function': {'arguments': '3'}},
        {'index': index, 'id': 'a', 'function': {'arguments': '4'}},
    ]
    assert calls_of(core, fragments) == [(0, 'a', '124'), (1, 'b', '3')]


def test_unindexed_call_after_the_largest_index_gets_a_free_index(core: SimpleNamespace) -> None:
    """r12 notes: index 2**63-1 then an id-only fragment gave two calls with the same index. A call
    started without index gets max+1, or when that overflows the smallest free index."""
    top = 2**63 - 1
    fragments = [
        {'index': top, 'id': 'a', 'function': {'arguments': 'A'}},
        {'index': 1, 'id': 'b', 'function': {'arguments': 'B'}},
        {'id': 'c', 'function': {'arguments': 'C'}},  # 0: top + 1 overflows
        {'id': 'd', 'function': {'arguments': 'D'}},  # 2: 0 and 1 are taken
        {'function': {'arguments': 'd'}},  # continues the latest call
        {'index': top, 'function': {'arguments': 'a'}},
        {'index': 0, 'function': {'arguments': 'c'}},
        {'id': 'e'},  # 3
    ]
    calls = calls_of(core, fragments)  # in order of index (issue 12)
    assert calls == [(0, 'c', 'Cc'), (1, 'b', 'B'), (2, 'd', 'Dd'), (3, 'e', ''), (top, 'a', 'Aa')]
    assert len({index for index, _, _ in calls}) == len(calls)


def test_id_lookup_finds_the_first_call_with_that_id(core: SimpleNamespace) -> None:
    fragments = [
        {'index': 0, 'function': {'arguments': '0'}},
        {'index': 1, 'id': 'x', 'function': {'arguments': '1'}},
        {'index': 0, 'id': 'x'},  # call 0 gets id 'x' too
        {'id': 'x', 'function': {'arguments': '!'}},  # merges into the first call with that id
    ]
    assert calls_of(core, fragments) == [(0, 'x', '0!'), (1, 'x', '1')]


@pytest.mark.parametrize('with_index', [False, True])
def test_many_fragments_merge_in_linear_time(core: SimpleNamespace, with_index: bool) -> None:
    """Repro r2: 120k fragments with new ids in one event took 17-37 s (each fragment scanned all
    calls). Doubling the fragments must not quadruple the time."""

    def event(n: int) -> bytes:
        template = b'{"index":%d,"id":"c%d"}' if with_index else b'{"id":"c%d%.0d"}'
        frags = b','.join(template % (i, i) for i in range(n))
        return b'data: {"choices":[{"delta":{"tool_calls":[' + frags + b']}}]}\n\n'

    def seconds(n: int) -> float:
        body = event(n)
        best = math.inf
        for _ in range(3):
            agg = core.StreamAggregator()
            start = time.perf_counter()
            agg.feed(body)
            best = min(best, time.perf_counter() - start)
        assert len(agg.result()['tool_calls']) == n
        return best

    small, large = seconds(10_000), seconds(40_000)
    assert large < 12 * small + 0.05  # linear: ~4x; quadratic: ~16x
    assert large < 5.0


def test_choices_kept_apart(core: SimpleNamespace) -> None:
    """Case B04 (n=2): choices are not interleaved; choice 0 is the message, the others go to ``choices``."""
    case = load_case('B04')
    result, chunks, _ = run(core, [sse_from_payloads(case['input'], done=True)])
    want = case['expected']['choices']
    assert (result['text'], result['finish_reason']) == (want[0]['text'], want[0]['finish_reason']) == ('Red', 'stop')
    assert [{k: c[k] for k in ('index', 'text', 'finish_reason')} for c in result['choices']] == want[1:]
    assert len(chunks) == 6


def test_other_choices_merge_their_own_tool_calls(core: SimpleNamespace) -> None:
    frag = {'index': 0, 'id': 'a', 'function': {'name': 'f', 'arguments': '{"x"'}}
    payloads = [
        {'choices': [{'index': 2, 'delta': {'tool_calls': [frag], 'reasoning': 'r'}}, {'index': 0, 'delta': {'content': 'c'}}]},
        {'choices': [{'index': 2, 'delta': {'tool_calls': [{'index': 0, 'function': {'arguments': ':1}'}}]}, 'finish_reason': 'tool_calls'}]},
        {'choices': [{'index': -1, 'delta': {'content': 'dropped'}}, {'index': 'x', 'delta': {'content': 'dropped'}}]},
    ]  # fmt: skip
    result, _, _ = run(core, [sse_from_payloads(payloads)])
    assert (result['text'], result['tool_calls']) == ('c', [])
    assert result['choices'] == [
        {
            'index': 2,
            'text': '',
            'reasoning': 'r',
            'tool_calls': [{'index': 0, 'id': 'a', 'type': 'function', 'name': 'f', 'arguments': '{"x":1}'}],
            'finish_reason': 'tool_calls',
        }
    ]


@pytest.mark.parametrize('case_id', ['B01', 'B02', 'B07', 'B09'])
def test_cases_stream_openai(core: SimpleNamespace, case_id: str) -> None:
    case = load_case(case_id)
    result, _, errors = run(core, [sse_from_payloads(case['input'])])
    assert errors == []
    expected = case['expected']
    assert result['finish_reason'] == expected['finish_reason']
    got = [(c['id'], c['name'], core.parse_arguments(c['arguments'])) for c in result['tool_calls']]
    assert got == [(c['id'], c['name'], c['arguments']) for c in expected['tool_calls']]
    for call, want in zip(result['tool_calls'], expected['tool_calls'], strict=True):
        if 'arguments_raw' in want:
            assert call['arguments'] == want['arguments_raw']


def test_cumulative_usage_is_not_summed(core: SimpleNamespace) -> None:
    """Case B24's fault in openai-chat form: a usage repeated on every chunk is taken, not added up."""
    case = load_case('B24')
    payloads = [
        {
            'choices': [],
            'usage': {
                'prompt_tokens': c['usageMetadata']['promptTokenCount'],
                'completion_tokens': c['usageMetadata'].get('candidatesTokenCount', 0),
                'total_tokens': c['usageMetadata']['totalTokenCount'],
            },
        }
        for c in case['input']
    ]
    result, _, _ = run(core, [sse_from_payloads(payloads), b'data: {"choices": [], "usage": null}\n\n'])
    want = case['expected']
    assert result['usage'] == {
        'prompt_tokens': want['input_tokens'],
        'completion_tokens': want['output_tokens'],
        'total_tokens': want['total_tokens'],
    }


# --- bad input --------------------------------------------------------------------------------------


def test_unknown_format(core: SimpleNamespace) -> None:
    with pytest.raises(ValueError, match='openai-chat, openai-responses, anthropic, gemini, ollama'):
        core.StreamAggregator('bedrock')
    with pytest.raises(TypeError, match='must be bytes, bytearray or memoryview, not str'):
        core.StreamAggregator().feed('data: {}\n\n')


SUPPORTED = 'openai-chat, openai-responses, anthropic, gemini, ollama'
FEED_TYPE_ERROR = "feed() argument 'data' must be bytes, bytearray or memoryview, not {}"


@pytest.mark.parametrize(
    ('data', 'type_name'),
    [
        ('data: {}\n\n', 'str'),
        (None, 'NoneType'),
        (5, 'int'),
        (list(b'data: {"id":"x"}\n\n'), 'list'),
        ((1, 2), 'tuple'),
        ([256], 'list'),
    ],
)
def test_feed_rejects_non_bytes(core: SimpleNamespace, data: Any, type_name: str) -> None:
    """Repro r3: Rust took any int sequence, the twin rejected lists; now both take exactly bytes,
    bytearray and memoryview, with the same TypeError."""
    agg = core.StreamAggregator()
    with pytest.raises(TypeError) as info:
        agg.feed(data)
    assert str(info.value) == FEED_TYPE_ERROR.format(type_name)
    assert agg.result()['chunks'] == 0


def test_feed_accepts_bytes_bytearray_memoryview(core: SimpleNamespace) -> None:
    class Bytes(bytes):
        pass

    event = b'data: {"id":"x"}\n\n'
    agg = core.StreamAggregator()
    for data in (event, Bytes(event), bytearray(event), memoryview(event), memoryview(bytearray(event))):
        assert agg.feed(data) == [{'id': 'x'}]
    assert agg.feed(memoryview(b'xx' + event)[2:]) == [{'id': 'x'}]
    assert agg.feed(memoryview(event).cast('c')) == [{'id': 'x'}]
    assert agg.feed(memoryview(b'')) == []
    assert agg.result()['chunks'] == 7
    message = "feed() argument 'data' must be a C-contiguous memoryview of 1-byte items"
    for bad in (memoryview(event)[::2], memoryview(array.array('i', [1, 2]))):
        with pytest.raises(TypeError) as info:
            agg.feed(bad)
        assert str(info.value) == message


@pytest.mark.parametrize(
    ('format', 'error', 'message'),
    [
        (None, TypeError, "StreamAggregator() argument 'format' must be str, not NoneType"),
        (b'openai-chat', TypeError, "StreamAggregator() argument 'format' must be str, not bytes"),
        ('x"\\\ny', ValueError, 'unknown stream format "x\\"\\\\\ny"; supported: ' + SUPPORTED),
        ('\udc00', ValueError, 'unknown stream format "\udc00"; supported: ' + SUPPORTED),
    ],
)
def test_format_argument(core: SimpleNamespace, format: Any, error: type[Exception], message: str) -> None:
    """Repro r3: the twin raised AttributeError for StreamAggregator(None)."""
    with pytest.raises(error) as info:
        core.StreamAggregator(format)
    assert str(info.value) == message
    assert core.StreamAggregator().format == core.StreamAggregator(format='openai-chat').format == 'openai-chat'


def test_concurrent_use_is_a_clear_error() -> None:
    """Rust only: an aggregator is not thread-safe. A second thread using it while a big feed()
    runs (the GIL is released) gets a RuntimeError saying so, not 'Already mutably borrowed'."""
    agg = toolweave._core.StreamAggregator()
    body = b'data: {"choices":[{"delta":{"content":"' + b'x' * (1 << 20) + b'"}}]}\n\n'
    done = threading.Event()

    def feed() -> None:
        for _ in range(30):
            agg.feed(body)
        done.set()

    worker = threading.Thread(target=feed)
    worker.start()
    messages = set()
    while not done.is_set():
        try:
            agg.result()
        except RuntimeError as exc:
            messages.add(str(exc))
    worker.join()
    in_use = (
        'StreamAggregator is in use by another thread (a feed() or finish() is running); '
        'an aggregator is not thread-safe: use one per stream'
    )
    assert messages <= {in_use}
    assert agg.result()['chunks'] == 30


def test_non_json_payload_keeps_aggregator_usable(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator()
    good = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    with pytest.raises(StreamFormatError) as info:
        agg.feed(good + b'data: {"choices": tru\n\n' + good)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.event == 2
    assert err.excerpt == '{"choices": tru'
    assert str(err) == err.message == 'event 2: data is not valid JSON: \'{"choices": tru\''
    assert len(err.chunks) == 2
    assert agg.feed(good) == [{'choices': [{'index': 0, 'delta': {'content': 'a'}}]}]
    assert agg.result()['text'] == 'aaa'
    assert agg.result()['chunks'] == 3


@pytest.mark.parametrize(
    ('payload', 'what'),
    [
        (b'[1, 2]', 'data is not a JSON object'),
        (b'"text"', 'data is not a JSON object'),
        (b'{"a": "\xff"}', 'data is not valid UTF-8'),
        (b'{"a": 1} x', 'data is not valid JSON'),
        (b'{"a": NaN}', 'data is not valid JSON'),
        (b'not json', 'data is not valid JSON'),
    ],
)
def test_bad_payloads(core: SimpleNamespace, payload: bytes, what: str) -> None:
    agg = core.StreamAggregator()
    with pytest.raises(StreamFormatError, match=what):
        agg.feed(b': hi\n\ndata: ' + payload + b'\n\n')
    assert agg.result()['chunks'] == 0


def test_huge_number_is_a_bad_payload_and_later_events_survive(core: SimpleNamespace) -> None:
    """Repro r4: in the twin a 5000-digit integer raised a bare ValueError that dropped the later
    good events of the same feed; now it is a StreamFormatError like any bad payload."""
    good = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'
    agg = core.StreamAggregator()
    with pytest.raises(StreamFormatError) as info:
        agg.feed(good + b'data: {"x":' + b'9' * 5000 + b'}\n\n' + good)
    assert str(info.value) == (
        'event 2: data has a number too large (more than 4300 integer digits): \'{"x":' + '9' * 55 + "'"
    )
    assert info.value.event == 2
    assert len(info.value.chunks) == 2
    assert agg.result()['text'] == 'hihi'
    ok = b'data: {"x":' + b'9' * 4300 + b', "s": "' + b'9' * 5000 + b'"}\n\n'
    assert agg.feed(ok) == [{'x': int('9' * 4300), 's': '9' * 5000}]


def test_error_event_frame(core: SimpleNamespace) -> None:
    body, expected = load_stream('004-groq-gptoss-midstream-error-event')
    agg = core.StreamAggregator()
    assert agg.error is None
    with pytest.raises(ProviderStreamError) as info:
        agg.feed(body)
    err = info.value
    chunks = err.chunks
    assert isinstance(err, RuntimeError)
    assert err.message.startswith('Tool call validation failed')
    assert len(chunks) > 50
    assert agg.finish() == []
    assert err.error is not None
    assert err.error['event'] == 'error'
    assert err.error['data']['error']['code'] == expected['error']['code'] == 'tool_use_failed'
    assert agg.error == err.error
    result = agg.result()
    assert result['reasoning'] == expected['reasoning']
    assert result['chunks'] == len(chunks)
    assert result['truncated'] is True


@pytest.mark.parametrize(
    ('frame', 'message', 'event'),
    [
        (b'event: error\ndata: {"error": {"message": "overloaded", "type": "x"}}\n\n', 'overloaded', 'error'),
        (b'event: error\ndata: not json\n\n', 'not json', 'error'),
        (b'event: error\ndata: {"message": "m"}\n\n', 'm', 'error'),
        (b'data: {"error": {"message": "quota", "code": 429}}\n\n', 'quota', 'message'),
        (b'data: {"error": "plain"}\n\n', 'plain', 'message'),
    ],
)
def test_provider_errors(core: SimpleNamespace, frame: bytes, message: str, event: str) -> None:
    agg = core.StreamAggregator()
    good = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    with pytest.raises(ProviderStreamError) as info:
        agg.feed(good + frame + good)
    assert info.value.message == message
    assert info.value.error is not None
    assert info.value.error['event'] == event
    assert len(info.value.chunks) == 2
    assert agg.result()['text'] == 'aa'
    assert agg.result()['chunks'] == 2


def test_null_error_is_not_an_error(core: SimpleNamespace) -> None:
    result, _chunks, errors = run(core, [b'data: {"error": null, "choices": []}\n\n'])
    assert errors == [] and result['chunks'] == 1


def test_exceptions_are_shared_classes() -> None:
    with pytest.raises(ToolArgumentsError) as parse_error:
        toolweave._core.parse_arguments('{x')
    assert type(parse_error.value) is ToolArgumentsError
    with pytest.raises(StreamFormatError) as format_error:
        toolweave._core.StreamAggregator().feed(b'data: {x\n\n')
    assert type(format_error.value) is StreamFormatError
    with pytest.raises(ProviderStreamError) as provider_error:
        toolweave._core.StreamAggregator().feed(b'event: error\ndata: {"message": "m"}\n\n')
    assert type(provider_error.value) is ProviderStreamError
    assert issubclass(StreamFormatError, ValueError) and issubclass(ProviderStreamError, RuntimeError)
    err = ProviderStreamError('boom', {'event': 'error', 'message': 'boom', 'data': None})
    assert err.message == 'boom' and err.chunks == []
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is ProviderStreamError and again.error == err.error
    expected = 'reference' if os.environ.get('TOOLWEAVE_PURE') == '1' else 'rust'
    assert toolweave._native.IMPLEMENTATION == expected


# --- Rust vs reference --------------------------------------------------------------------------------


@st.composite
def openai_streams(draw: st.DrawFn) -> bytes:
    """Random but plausible chat-completions streams: text, reasoning, parallel tool calls, usage."""
    n_calls = draw(st.integers(0, 3))
    texty = st.text(st.characters(codec='utf-8', exclude_characters='\x00'), max_size=12)
    with_index = draw(st.booleans())
    events: list[dict[str, Any]] = []
    base = {'id': draw(st.sampled_from(['chatcmpl-1', '', 'x'])), 'model': draw(st.sampled_from(['m', 'gpt-4o']))}
    if draw(st.booleans()):
        events.append({**base, 'choices': [{'index': 0, 'delta': {'role': 'assistant', 'content': None}}]})
    for _ in range(draw(st.integers(0, 4))):
        key = draw(st.sampled_from(['content', 'reasoning_content', 'reasoning']))
        events.append({**base, 'choices': [{'index': draw(st.sampled_from([0, 0, 1])), 'delta': {key: draw(texty)}}]})
    for i in range(n_calls):
        args = json.dumps({'k': draw(texty), 'n': draw(st.integers(-5, 10**6))}, ensure_ascii=draw(st.booleans()))
        cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=5)))
        parts = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True)]
        for j, part in enumerate(parts):
            frag: dict[str, Any] = {'function': {'arguments': part}}
            if with_index:
                frag['index'] = i
            if j == 0:
                frag['id'] = f'call_{i}'
                frag['type'] = 'function'
                frag['function']['name'] = draw(st.sampled_from(['f', 'get_weather', '']))
            elif draw(st.booleans()):
                frag['id'] = ''
                frag['function']['name'] = None
            events.append({**base, 'choices': [{'index': 0, 'delta': {'tool_calls': [frag]}, 'finish_reason': None}]})
    if draw(st.booleans()):
        events.append(
            {
                **base,
                'choices': [{'index': 0, 'delta': {}, 'finish_reason': draw(st.sampled_from(['stop', 'tool_calls']))}],
            }
        )
    if draw(st.booleans()):
        events.append(
            {**base, 'choices': [], 'usage': {'prompt_tokens': draw(st.integers(0, 999)), 'details': {'c': 1.5}}}
        )
    eol = draw(st.sampled_from([b'\n', b'\r\n', b'\r']))
    out = []
    for ev in events:
        if draw(st.integers(0, 5)) == 0:
            out.append(b': ping' + eol)
        data = json.dumps(ev, ensure_ascii=draw(st.booleans())).encode()
        out.append(b'data: ' + data + eol + eol)
    if draw(st.booleans()):
        out.append(b'data: [DONE]' + eol + eol)
    return b''.join(out)


def run_both(pieces: list[bytes]) -> None:
    rust = run(IMPLEMENTATIONS['rust'], pieces)
    ref = run(IMPLEMENTATIONS['reference'], pieces)
    assert rust == ref


@settings(max_examples=300, deadline=None)
@given(body=openai_streams(), data=st.data())
def test_differential_random_streams(body: bytes, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    run_both(pieces)
    assert run(IMPLEMENTATIONS['rust'], pieces) == run(IMPLEMENTATIONS['rust'], [body])


FRAGMENT_INDICES = st.sampled_from([0, 1, 2, 5, -1, 2**63 - 2, 2**63 - 1, 2**63, 1.0, None, 'missing'])


@settings(max_examples=300, deadline=None)
@given(
    fragments=st.lists(
        st.tuples(FRAGMENT_INDICES, st.sampled_from([None, '', 'a', 'b', 'c']), st.sampled_from(['', 'x', 'y'])),
        max_size=12,
    ),
    per_event=st.booleans(),
)
def test_differential_fragment_merging(fragments: list[tuple[Any, str | None, str]], per_event: bool) -> None:
    """Random tool-call fragments (edge indices included): same calls, and indices stay unique."""
    frags = []
    for index, call_id, arguments in fragments:
        frag: dict[str, Any] = {'function': {'arguments': arguments}}
        if index != 'missing':
            frag['index'] = index
        if call_id is not None:
            frag['id'] = call_id
        frags.append(frag)
    groups = [[f] for f in frags] if per_event else [frags]
    body = sse_from_payloads([{'choices': [{'delta': {'tool_calls': g}}]} for g in groups])
    run_both([body])
    calls = run(IMPLEMENTATIONS['rust'], [body])[0]['tool_calls']
    assert len({c['index'] for c in calls}) == len(calls)
    assert all(0 <= c['index'] < 2**63 for c in calls)


SSE_ALPHABET = st.sampled_from(
    [
        b'data: ',
        b'data:',
        b'event: error\n',
        b'\n',
        b'\r',
        b'\r\n',
        b':',
        b' ',
        b'{',
        b'}',
        b'[',
        b']',
        b'"',
        b',',
        b'[DONE]',
        b'{"choices":[{"index":0,"delta":{"content":"x"}}]}',
        b'{"error":{"message":"e"}}',
        b'\xff',
        b'\xc3',
        b'\xa9',
        b'null',
        b'1',
        b'"choices"',
        b'"tool_calls"',
        b'"index":',
        b'id: 1\n',
        b'\xef\xbb\xbf',
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(st.one_of(st.binary(max_size=30), st.lists(SSE_ALPHABET, max_size=12).map(b''.join)), max_size=8)
)
def test_fuzz_feed_raises_only_documented_errors(pieces: list[bytes]) -> None:
    """Random bytes: only StreamFormatError / ProviderStreamError (caught in run), same outcome in both."""
    run_both(pieces)
