"""StreamAggregator for anthropic, openai-responses, gemini and ollama: corpus, cases, splits, Rust == twin."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.core_fixtures import (
    IMPLEMENTATIONS,
    corpus_streams,
    load_case,
    load_stream,
    sse_from_payloads,
    stream_format,
)
from toolweave.chat.stream import aggregate_to_chat_response
from toolweave.exceptions import ProviderStreamError, StreamFormatError, ToolArgumentsError

STREAMS = [n for n in corpus_streams(None) if n not in corpus_streams('openai-chat')]


def run(core: SimpleNamespace, format: str, pieces: list[bytes]) -> tuple[dict[str, Any], list[Any], list[str]]:
    agg = core.StreamAggregator(format)
    chunks: list[Any] = []
    errors: list[str] = []
    for piece in [*pieces, None]:
        try:
            chunks += agg.feed(piece) if piece is not None else agg.finish()
        except (StreamFormatError, ProviderStreamError) as exc:
            chunks += exc.chunks
            errors.append(type(exc).__name__)
    return agg.result(), chunks, errors


def ndjson(payloads: list[Any]) -> bytes:
    return b''.join(json.dumps(p).encode() + b'\n' for p in payloads)


def test_corpus_covers_every_format() -> None:
    formats = {stream_format(load_stream(n)[1]) for n in STREAMS}
    assert formats == {'anthropic', 'gemini', 'openai-responses'}
    assert len(STREAMS) == 8


@pytest.mark.parametrize('name', STREAMS)
def test_corpus_whole(core: SimpleNamespace, name: str) -> None:
    body, expected = load_stream(name)
    result, chunks, errors = run(core, stream_format(expected), [body])
    assert errors == []
    assert result['format'] == stream_format(expected)
    assert (result['id'], result['model']) == (expected['response_id'], expected['model'])
    assert (result['text'], result['reasoning']) == (expected['text'], expected['reasoning'])
    assert result['finish_reason'] == expected['finish_reason']
    assert result['usage'] == expected['usage']
    assert result['truncated'] is False
    assert (
        result['chunks'] == len(chunks) == sum(1 for line in body.splitlines() if line.startswith((b'data: {', b'{')))
    )
    calls = result['tool_calls']
    assert [(c['name'], json.loads(c['arguments'] or '{}')) for c in calls] == [
        (c['name'], c['arguments']) for c in expected['tool_calls']
    ]
    assert [c['index'] for c in calls] == list(range(len(calls)))
    for call, want in zip(calls, expected['tool_calls'], strict=True):
        if want['id'] is not None:
            assert call['id'] == want['id']
        else:  # Gemini sends no id: a stable one is generated from the response id
            assert call['id'] == f'{expected["response_id"]}-call-{call["index"]}'
        if 'arguments_raw' in want:
            assert call['arguments'] == want['arguments_raw']
        for key in ('item_id', 'thought_signature'):
            if key in want:
                assert call[key] == want[key]
    if 'content_blocks' in expected:
        got = [(b['type'], b.get('id'), b.get('input_raw'), b.get('text')) for b in result['blocks']]
        want_blocks = [(b['type'], b.get('id'), b.get('input_raw'), b.get('text')) for b in expected['content_blocks']]
        assert got == want_blocks
    else:
        assert result['blocks'] == []


@pytest.mark.parametrize('name', STREAMS)
def test_corpus_line_by_line_and_every_split(core: SimpleNamespace, name: str) -> None:
    """Line by line, and two pieces split at every byte offset (every 7th byte for streams over 20 KB)."""
    body, expected = load_stream(name)
    fmt = stream_format(expected)
    whole = run(core, fmt, [body])
    assert run(core, fmt, body.splitlines(keepends=True)) == whole
    step = 1 if len(body) < 20_000 else 7
    for i in range(0, len(body) + 1, step):
        assert run(core, fmt, [body[:i], body[i:]]) == whole, f'split at {i}'


@pytest.mark.parametrize('name', corpus_streams(None))
def test_rust_equals_reference(name: str) -> None:
    body, expected = load_stream(name)
    fmt = stream_format(expected)
    assert run(IMPLEMENTATIONS['rust'], fmt, [body]) == run(IMPLEMENTATIONS['reference'], fmt, [body])


@pytest.mark.parametrize(
    ('name', 'normalized'),
    [('005', 'tool_calls'), ('006', 'stop'), ('008', 'tool_calls'), ('009', 'tool_calls'), ('016', 'tool_calls')],
)
def test_normalized_finish_reason(core: SimpleNamespace, name: str, normalized: str) -> None:
    (stream,) = [n for n in STREAMS if n.startswith(name)]
    body, expected = load_stream(stream)
    result, _, _ = run(core, stream_format(expected), [body])
    assert (result['finish_reason'], result['normalized_finish_reason']) == (expected['finish_reason'], normalized)


def test_case_b05_ollama_done_stop_after_tool_calls(core: SimpleNamespace) -> None:
    case = load_case('B05')
    result, chunks, errors = run(core, 'ollama', [ndjson(case['input'])])
    want = case['expected']
    assert errors == [] and len(chunks) == 2
    assert result['normalized_finish_reason'] == want['finish_reason'] == 'tool_calls'
    assert result['finish_reason'] == want['provider_finish_reason'] == 'stop'
    assert [(c['name'], json.loads(c['arguments'])) for c in result['tool_calls']] == [
        (c['name'], c['arguments']) for c in want['tool_calls']
    ]
    assert result['tool_calls'][0]['arguments'] == '{"city":"Paris"}'
    assert result['tool_calls'][0]['id'] == 'call-0'
    assert result['usage'] == {'prompt_eval_count': 20, 'eval_count': 9}
    assert result['model'] == 'm'
    assert result['truncated'] is False


def test_ollama_ndjson_any_split(core: SimpleNamespace) -> None:
    body = ndjson(load_case('B05')['input']).replace(b'\n', b'\r\n', 1) + b'\n  \n'
    whole = run(core, 'ollama', [body])
    for i in range(len(body) + 1):
        assert run(core, 'ollama', [body[:i], body[i:]]) == whole
    assert run(core, 'ollama', [body.rstrip()]) == whole  # last line without newline


def test_case_b12_responses_completed_arguments_win(core: SimpleNamespace) -> None:
    case = load_case('B12')
    payloads = case['input'][:3]  # up to function_call_arguments.done
    result, _, errors = run(core, 'openai-responses', [sse_from_payloads(payloads)])
    assert errors == []
    want = case['expected']['tool_call_event_when_complete']
    (call,) = result['tool_calls']
    assert (call['id'], call['item_id'], call['name']) == (want['id'], 'fc_1', want['name'])
    assert json.loads(call['arguments']) == want['arguments']
    assert result['truncated'] is True  # no response.completed
    whole, _, _ = run(core, 'openai-responses', [sse_from_payloads(case['input'])])
    assert whole['tool_calls'] == result['tool_calls']


def test_responses_done_replaces_fragments(core: SimpleNamespace) -> None:
    payloads = [
        {'type': 'response.output_item.added', 'output_index': 0, 'item': {'type': 'function_call', 'id': 'fc', 'call_id': 'c', 'name': 'f', 'arguments': ''}},
        {'type': 'response.function_call_arguments.delta', 'output_index': 0, 'delta': '{"a":'},
        {'type': 'response.function_call_arguments.done', 'output_index': 0, 'arguments': '{"a":2}'},
        {'type': 'response.output_text.delta', 'delta': 'hi'},
        {'type': 'response.reasoning_summary_text.delta', 'delta': 'think'},
        {'type': 'response.incomplete', 'response': {'id': 'r', 'model': 'm', 'status': 'incomplete', 'usage': {'input_tokens': 1}}},
    ]  # fmt: skip
    result, _, _ = run(core, 'openai-responses', [sse_from_payloads(payloads)])
    assert result['tool_calls'][0]['arguments'] == '{"a":2}'
    assert (result['text'], result['reasoning']) == ('hi', 'think')
    assert (result['finish_reason'], result['normalized_finish_reason']) == ('incomplete', 'length')
    assert result['usage'] == {'input_tokens': 1}


def test_case_b25_anthropic_interleaved_blocks(core: SimpleNamespace) -> None:
    case = load_case('B25')
    result, _, errors = run(core, 'anthropic', [sse_from_payloads(case['input'])])
    assert errors == []
    assert [(c['id'], c['name'], json.loads(c['arguments'])) for c in result['tool_calls']] == [
        (c['id'], c['name'], c['arguments']) for c in case['expected']['tool_calls']
    ]
    assert result['finish_reason'] == case['expected']['finish_reason']
    assert result['normalized_finish_reason'] == 'tool_calls'
    assert result['usage'] == {'output_tokens': 30}


def test_case_b27_anthropic_start_input_not_merged(core: SimpleNamespace) -> None:
    case = load_case('B27')
    result, _, _ = run(core, 'anthropic', [sse_from_payloads(case['input'])])
    (call,) = result['tool_calls']
    want = case['expected']['final']
    assert (call['id'], call['name'], json.loads(call['arguments'])) == (want['id'], want['name'], want['arguments'])
    assert call['arguments'] == '{"name": "Alice", "age": 30}'


def test_anthropic_whole_input_and_usage_merge(core: SimpleNamespace) -> None:
    payloads = [
        {'type': 'message_start', 'message': {'id': 'msg', 'model': 'c', 'usage': {'input_tokens': 5, 'output_tokens': 1}}},
        {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 't', 'name': 'f', 'input': {'x': 'ü'}}},
        {'type': 'content_block_stop', 'index': 0},
        {'type': 'content_block_start', 'index': 1, 'content_block': {'type': 'thinking', 'thinking': ''}},
        {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'thinking_delta', 'thinking': 'hm'}},
        {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'signature_delta', 'signature': 'SIG'}},
        {'type': 'content_block_delta', 'index': 9, 'delta': {'type': 'text_delta', 'text': 'lost'}},
        {'type': 'message_delta', 'delta': {'stop_reason': 'max_tokens'}, 'usage': {'output_tokens': 7, 'input_tokens': None}},
        {'type': 'message_stop'},
    ]  # fmt: skip
    result, _, _ = run(core, 'anthropic', [sse_from_payloads(payloads)])
    assert result['tool_calls'][0]['arguments'] == '{"x":"ü"}'
    assert result['usage'] == {'input_tokens': 5, 'output_tokens': 7}
    assert result['reasoning'] == 'hm' and result['text'] == ''
    assert result['blocks'][1] == {'type': 'thinking', 'thinking': 'hm', 'signature': 'SIG'}
    assert result['normalized_finish_reason'] == 'length'


def test_anthropic_error_event_keeps_partial_result(core: SimpleNamespace) -> None:
    body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"c"}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}\n\n'
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )  # fmt: skip
    agg = core.StreamAggregator('anthropic')
    with pytest.raises(ProviderStreamError) as info:
        agg.feed(body)
    assert str(info.value) == 'Overloaded'
    assert len(info.value.chunks) == 3
    result = agg.result()
    assert (result['text'], result['truncated'], result['id']) == ('par', True, 'm1')
    assert agg.error is not None and agg.error['data']['error']['type'] == 'overloaded_error'


def test_gemini_partial_args_paths(core: SimpleNamespace) -> None:
    def fc(body: dict[str, Any]) -> dict[str, Any]:
        return {'candidates': [{'content': {'parts': [{'functionCall': body}]}}], 'responseId': 'R'}

    payloads = [
        fc({'name': 'f', 'willContinue': True}),
        fc({'partialArgs': [{'jsonPath': '$.a.b', 'stringValue': 'he', 'willContinue': True}], 'willContinue': True}),
        fc({'partialArgs': [{'jsonPath': '$.a.b', 'stringValue': 'llo'}], 'willContinue': True}),
        fc({'partialArgs': [{'jsonPath': '$.list[0]', 'numberValue': 1}, {'jsonPath': '$.list[1]', 'boolValue': True}], 'willContinue': True}),
        fc({'partialArgs': [{'jsonPath': '$.list[5]', 'numberValue': 9}, {'jsonPath': "$['odd key']", 'nullValue': None}], 'willContinue': True}),
        fc({}),
        fc({'partialArgs': [{'jsonPath': '$.late', 'stringValue': 'x'}]}),
        {'candidates': [{'content': {'parts': [{'text': 'plan', 'thought': True}, {'text': 'ok'}]}, 'finishReason': 'MAX_TOKENS'}], 'usageMetadata': {'totalTokenCount': 3}},
        {'candidates': [{'index': 1, 'content': {'parts': [{'text': 'other candidate'}]}}], 'usageMetadata': {'totalTokenCount': 4}},
    ]  # fmt: skip
    result, _, _ = run(core, 'gemini', [sse_from_payloads(payloads)])
    (call,) = result['tool_calls']
    assert json.loads(call['arguments']) == {'a': {'b': 'hello'}, 'list': [1, True], 'odd key': None}
    assert (call['id'], call['thought_signature']) == ('R-call-0', None)
    assert (result['text'], result['reasoning']) == ('ok', 'plan')
    assert result['usage'] == {'totalTokenCount': 4}  # the last one, never a sum
    assert (result['finish_reason'], result['normalized_finish_reason']) == ('MAX_TOKENS', 'length')


OTHER_FORMATS = ['anthropic', 'openai-responses', 'gemini', 'ollama']
SEEDS = [
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use"}}\n\n',
    b'{"message":{"tool_calls":[{"function":{"arguments":[1]}}]},"done":true}\n',
    b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"$[0]","stringValue":"x"}]}}]}}]}\n\n',
    b'data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c"}}\n\n',
    b'data: {"choices":[{"index":1,"delta":{"content":"\xff"}}]}\n\n',
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n',
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\"\xc3\xa9"}}\n\n',
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"t\\u00e9"}}\n\n',
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"a"}}\n\n',
]


def run_limited(name: str, fmt: str, pieces: list[bytes], options: dict[str, Any], method: str = 'feed') -> Any:
    agg = IMPLEMENTATIONS[name].StreamAggregator(fmt, **options)
    feed = getattr(agg, method)
    end = (lambda: agg.feed_text(b'', end=True)) if method == 'feed_text' else agg.finish
    out: list[Any] = []
    for piece in [*pieces, None]:
        try:
            out.append(feed(piece) if piece is not None else end())
        except (StreamFormatError, ProviderStreamError) as exc:
            out.append((type(exc).__name__, str(exc), exc.chunks))
    calls = agg.result()['tool_calls']
    partial = []
    for i in range(len(calls)):
        try:
            partial.append(agg.partial_arguments(i))
        except ToolArgumentsError as exc:
            partial.append(str(exc))
    return out, agg.result(), partial


@settings(max_examples=200, deadline=None)
@given(
    fmt=st.sampled_from(['openai-chat', *OTHER_FORMATS]),
    pieces=st.lists(st.binary(max_size=60) | st.sampled_from(SEEDS), max_size=8),
    options=st.fixed_dictionaries(
        {},
        optional={
            'max_event_bytes': st.sampled_from([8, 64, 200]),
            'max_total_bytes': st.sampled_from([50, 300]),
            'invalid_utf8': st.sampled_from(['reject', 'replace']),
        },
    ),
)
def test_fuzz_rust_equals_reference_and_never_crashes(fmt: str, pieces: list[bytes], options: dict[str, Any]) -> None:
    for method in ('feed', 'feed_deltas', 'feed_text'):
        rust = run_limited('rust', fmt, pieces, options, method)
        assert rust == run_limited('reference', fmt, pieces, options, method), method


def test_chat_response_ollama_case_b05(core: SimpleNamespace) -> None:
    case = load_case('B05')
    result, _, _ = run(core, 'ollama', [ndjson(case['input'])])
    response = aggregate_to_chat_response(result)
    want = case['expected']
    assert response.usage is not None
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (
        want['usage']['input_tokens'],
        want['usage']['output_tokens'],
    )
    assert response.usage.total_tokens == 29
    (generation,) = response.generations
    assert generation.finish_reason == 'tool_calls'
    assert response.metadata['native_finish_reason'] == 'stop'
    assert [(c.id, c.name, json.loads(c.arguments)) for c in generation.output.tool_calls] == [
        ('call-0', 'get_weather', {'city': 'Paris'})
    ]


@pytest.mark.parametrize(
    ('prefix', 'usage'),
    # 018 (Gemini 3): 58 candidate + 183 thought tokens are completion tokens (issue 12): 249 + 241 == 490
    [('005', (1591, 175, 1766)), ('010', None), ('018', (249, 241, 490)), ('009', (255, 16, 271))],
)
def test_chat_response_from_corpus(prefix: str, usage: tuple[int, int, int] | None) -> None:
    (name,) = [n for n in STREAMS if n.startswith(prefix)]
    body, expected = load_stream(name)
    result, _, _ = run(IMPLEMENTATIONS['rust'], stream_format(expected), [body])
    response = aggregate_to_chat_response(result)
    assert response.usage is not None and response.usage.native == expected['usage']
    if usage is not None:
        got = (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.total_tokens)
        assert got == usage
    (generation,) = response.generations
    assert generation.finish_reason == 'tool_calls'
    assert generation.output.metadata.get('reasoning') == expected['reasoning']
    assert (response.id, response.model) == (expected['response_id'], expected['model'])
    assert [c.name for c in generation.output.tool_calls] == [c['name'] for c in expected['tool_calls']]


def test_partial_arguments_after_every_fragment(core: SimpleNamespace) -> None:
    """Case B27: the tool input is surfaced while it streams, fragment by fragment."""
    case = load_case('B27')
    agg = core.StreamAggregator('anthropic')
    snapshots = []
    for event in case['input']:
        agg.feed(sse_from_payloads([event]))
        if event['type'] == 'content_block_delta':
            snapshots.append(agg.partial_arguments(0))
    assert snapshots == case['expected']['partial_snapshots']
    for bad in (1, -1, True, '0'):
        with pytest.raises(IndexError, match='no tool call at index'):
            agg.partial_arguments(bad)


@pytest.mark.parametrize('fmt', ['openai-chat', 'gemini', 'ollama'])
def test_partial_arguments_other_formats(core: SimpleNamespace, fmt: str) -> None:
    if fmt == 'openai-chat':
        body, _ = load_stream('002-openai-chat-single-call-usage-chunk')
    elif fmt == 'gemini':
        body, _ = load_stream('018-gemini3-partial-args-parallel-no-args')
    else:
        body = ndjson(load_case('B05')['input'])
    agg = core.StreamAggregator(fmt)
    agg.feed(body)
    calls = agg.result()['tool_calls']
    assert len(calls) == {'openai-chat': 1, 'gemini': 4, 'ollama': 1}[fmt]
    assert [agg.partial_arguments(i) for i in range(len(calls))] == [json.loads(c['arguments'] or '{}') for c in calls]
    assert agg.partial_arguments(len(calls) - 1) != {}  # the last call of each stream has arguments


def test_limits_event_size_skips_to_the_end_of_the_event(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator('openai-chat', max_event_bytes=60)
    with pytest.raises(StreamFormatError, match=r'^event of 79 bytes is larger than max_event_bytes \(60\)$') as info:
        agg.feed(b'data: {"choices":[{"delta":{"content":"' + b'x' * 40)
    assert info.value.chunks == []
    assert agg.feed(b'x' * 1000) == []  # still the same event: skipped, nothing kept
    chunks = agg.feed(b'yy"}}]}\n\ndata: {"choices":[{"delta":{"content":"ok"}}]}\n\n')
    assert chunks == [{'choices': [{'delta': {'content': 'ok'}}]}]
    assert agg.result()['text'] == 'ok'
    with pytest.raises(StreamFormatError, match='event of 61 bytes'):
        agg.feed(b'data: ' + b'{"a": "' + b'y' * 52 + b'"}\n\n')


def test_limits_ndjson_event_size(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator('ollama', max_event_bytes=40)
    with pytest.raises(StreamFormatError, match=r'event of 55 bytes is larger than max_event_bytes \(40\)'):
        agg.feed(b'{"message": {"content": "' + b'x' * 30)
    assert agg.feed(b'tail"}}\n{"message": {"content": "a"}}\n') == [{'message': {'content': 'a'}}]
    assert agg.result()['text'] == 'a'


def test_limits_total_size(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator('anthropic', max_total_bytes=100)
    agg.feed(b'data: {"type":"ping"}\n\n')
    with pytest.raises(StreamFormatError, match=r'^stream of 123 bytes is larger than max_total_bytes \(100\)$'):
        agg.feed(b'x' * 100)
    assert agg.result()['chunks'] == 1


@pytest.mark.parametrize(
    ('kwargs', 'message'),
    [
        ({'max_event_bytes': 0}, 'max_event_bytes must be an int of at least 1, not 0'),
        ({'max_total_bytes': True}, 'max_total_bytes must be an int of at least 1, not True'),
        ({'max_total_bytes': 1.5}, 'max_total_bytes must be an int of at least 1, not 1.5'),
        ({'invalid_utf8': 'ignore'}, "invalid_utf8 must be 'reject' or 'replace', not 'ignore'"),
    ],
)
def test_limit_arguments(core: SimpleNamespace, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        core.StreamAggregator('openai-chat', **kwargs)
    assert str(info.value) == 'StreamAggregator() ' + message


@pytest.mark.parametrize('fmt', ['openai-chat', *['anthropic', 'openai-responses', 'gemini', 'ollama']])
def test_invalid_utf8_policy(core: SimpleNamespace, fmt: str) -> None:
    line = b'{"message":{"content":"a\xffb"},"candidates":[{"content":{"parts":[{"text":"a\xffb"}]}}],"choices":[{"delta":{"content":"a\xffb"}}],"type":"response.output_text.delta","delta":"a\xffb"}'
    body = line + b'\n' if fmt == 'ollama' else b'data: ' + line + b'\n\n'
    with pytest.raises(StreamFormatError, match='data is not valid UTF-8'):
        core.StreamAggregator(fmt).feed(body)
    agg = core.StreamAggregator(fmt, invalid_utf8='replace')
    (chunk,) = agg.feed(body)
    assert chunk['delta'] == 'a\ufffdb'
    if fmt != 'anthropic':
        assert agg.result()['text'] == 'a\ufffdb'


@pytest.mark.parametrize('fmt', ['openai-chat', 'anthropic', 'gemini'])
def test_100k_nested_brackets_in_an_event_is_an_error(core: SimpleNamespace, fmt: str) -> None:
    agg = core.StreamAggregator(fmt)
    with pytest.raises(StreamFormatError, match='event 1: data nests deeper than 200 levels'):
        agg.feed(b'data: {"a":' + b'[' * 100_000 + b'\n\n')
    assert agg.feed(b'data: {}\n\n') == [{}]


@pytest.mark.parametrize('fmt', ['openai-chat', 'anthropic', 'gemini', 'ollama'])
def test_max_depth_bounds_event_data(core: SimpleNamespace, fmt: str) -> None:
    agg = core.StreamAggregator(fmt, max_depth=3)
    shallow = b'{"x": [[{}]], "model": "m"}'  # the innermost {} is at depth 3
    deep = b'{"x": [[{"y": 1}]], "model": "m"}'  # 1 is at depth 4
    frame = (lambda d: d + b'\n') if fmt == 'ollama' else (lambda d: b'data: ' + d + b'\n\n')
    assert len(agg.feed(frame(shallow))) == 1
    with pytest.raises(StreamFormatError, match=r"event 2: data nests deeper than 3 levels: '\{\"x\""):
        agg.feed(frame(deep))
    assert len(agg.feed(frame(shallow))) == 1
    assert agg.result()['chunks'] == 2
    # An error earlier in the text than the excess depth is reported as what it is.
    with pytest.raises(StreamFormatError, match='data is not valid JSON'):
        agg.feed(frame(b'{"x": tru, "y": [[[[[1]]]]]}'))


def test_max_depth_bounds_partial_arguments(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator('anthropic', max_depth=3)
    start = {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 't', 'name': 'f'}}
    agg.feed(sse_from_payloads([{**start, 'content_block': {**start['content_block'], 'input': {}}}]))
    delta = {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': ''}}
    steps = [
        ('{"a": [{"b"', {'a': [{}]}),
        (': 1}, [', {'a': [{'b': 1}, []]}),
        ('[', {'a': [{'b': 1}, [[]]]}),
        ('1', None),
    ]
    for piece, want in steps:
        agg.feed(sse_from_payloads([{**delta, 'delta': {**delta['delta'], 'partial_json': piece}}]))
        if want is None:  # 1 would be at depth 4
            with pytest.raises(ToolArgumentsError, match=r'char 19\): nesting deeper than 3 levels'):
                agg.partial_arguments(0)
        else:
            assert agg.partial_arguments(0) == want


@pytest.mark.parametrize('bad', [0, 201, -1, True, 2.0, '3'])
def test_max_depth_must_be_an_int_from_1_to_200(core: SimpleNamespace, bad: object) -> None:
    with pytest.raises(ValueError, match=r'StreamAggregator\(\) max_depth must be an int from 1 to 200, not '):
        core.StreamAggregator('anthropic', max_depth=bad)
    with pytest.raises(ValueError, match=r'parse_arguments\(\) max_depth must be an int from 1 to 200, not '):
        core.parse_arguments('{}', max_depth=bad)


@pytest.mark.parametrize('name', corpus_streams(None))
def test_feed_deltas_add_up_to_the_result(core: SimpleNamespace, name: str) -> None:
    body, expected = load_stream(name)
    agg = core.StreamAggregator(stream_format(expected))
    deltas: list[tuple[str, str]] = []
    for i in range(0, len(body), 97):
        try:
            deltas += agg.feed_deltas(body[i : i + 97])
        except ProviderStreamError as exc:
            deltas += exc.chunks
    agg.finish()
    result = agg.result()
    assert ''.join(t for t, _ in deltas) == result['text'] == expected['text']
    assert ''.join(r for _, r in deltas) == (result['reasoning'] or '')
    assert all(t or r for t, r in deltas)


@pytest.mark.parametrize('name', corpus_streams(None))
def test_feed_text_adds_up_to_the_result(core: SimpleNamespace, name: str) -> None:
    body, expected = load_stream(name)
    agg = core.StreamAggregator(stream_format(expected))
    texts: list[tuple[str, str]] = []
    pieces = [body[i : i + 97] for i in range(0, len(body), 97)]
    for n, piece in enumerate(pieces, start=1):
        try:
            texts.append(agg.feed_text(piece, end=n == len(pieces)))
        except ProviderStreamError as exc:
            assert len(exc.chunks) <= 1
            texts += exc.chunks
    result = agg.result()
    assert ''.join(t for t, _ in texts) == result['text'] == expected['text']
    assert ''.join(r for _, r in texts) == (result['reasoning'] or '')
    assert agg.feed_text(b'', end=True) == ('', '')


def test_feed_text_end_flushes_an_unterminated_event(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator('anthropic')
    start = b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    delta = (
        b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\xe6\x9d\xb1 \\"x\\""}}'
    )
    assert agg.feed_text(start + delta) == ('', '')
    assert agg.feed_text(b'', end=True) == ('\u6771 "x"', '')
    assert agg.result()['chunks'] == 2


# --- generated valid streams per format ----------------------------------------------------------

PIECES = st.lists(st.text(max_size=6), max_size=5)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    calls = draw(
        st.lists(
            st.tuples(st.from_regex(r'[a-z_]{1,8}', fullmatch=True), st.dictionaries(st.text(max_size=4), st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5), max_size=3)),
            max_size=3,
        )
    )  # fmt: skip
    return {
        'text': draw(PIECES),
        'reasoning': draw(PIECES),
        'calls': calls,
        'cut': draw(st.integers(1, 7)),
        'compact': draw(st.booleans()),  # the providers' own compact JSON (the core's fastest path)
    }


def render(fmt: str, m: dict[str, Any]) -> tuple[bytes, list[tuple[str, dict[str, Any]]]]:
    """A valid stream of ``fmt`` carrying message ``m``; returns the body and the expected calls."""
    events: list[dict[str, Any]] = []
    calls = [(name, args) for name, args in m['calls']]
    cut = m['cut']

    def parts(args: dict[str, Any]) -> list[str]:
        text = json.dumps(args)
        return [text[i : i + cut] for i in range(0, len(text), cut)] or ['']

    if fmt == 'anthropic':
        events.append({'type': 'message_start', 'message': {'id': 'm', 'model': 'c', 'usage': {'input_tokens': 1}}})
        blocks = [('thinking', r) for r in m['reasoning']] + [('text', t) for t in m['text']]
        for i, (kind, piece) in enumerate(blocks):
            events.append({'type': 'content_block_start', 'index': i, 'content_block': {'type': kind, kind: ''}})
            events.append({'type': 'content_block_delta', 'index': i, 'delta': {'type': f'{kind}_delta', kind: piece}})
        for j, (name, args) in enumerate(calls, start=len(blocks)):
            events.append(
                {
                    'type': 'content_block_start',
                    'index': j,
                    'content_block': {'type': 'tool_use', 'id': f't{j}', 'name': name, 'input': {}},
                }
            )
            events += [
                {'type': 'content_block_delta', 'index': j, 'delta': {'type': 'input_json_delta', 'partial_json': p}}
                for p in parts(args)
            ]
        events += [
            {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn'}, 'usage': {'output_tokens': 2}},
            {'type': 'message_stop'},
        ]
    elif fmt == 'openai-responses':
        events += [{'type': 'response.reasoning_summary_text.delta', 'delta': r} for r in m['reasoning']]
        events += [{'type': 'response.output_text.delta', 'delta': t} for t in m['text']]
        for j, (name, args) in enumerate(calls):
            events.append(
                {
                    'type': 'response.output_item.added',
                    'output_index': j,
                    'item': {
                        'type': 'function_call',
                        'id': f'fc{j}',
                        'call_id': f'c{j}',
                        'name': name,
                        'arguments': '',
                    },
                }
            )
            events += [
                {'type': 'response.function_call_arguments.delta', 'output_index': j, 'delta': p} for p in parts(args)
            ]
        events.append(
            {
                'type': 'response.completed',
                'response': {'id': 'r', 'model': 'g', 'status': 'completed', 'usage': {'input_tokens': 1}},
            }
        )
    elif fmt == 'gemini':
        events += [{'candidates': [{'content': {'parts': [{'text': r, 'thought': True}]}}]} for r in m['reasoning']]
        events += [{'candidates': [{'content': {'parts': [{'text': t}]}}]} for t in m['text']]
        for name, args in calls:
            fc: dict[str, Any] = {'name': name, 'willContinue': True}
            events.append({'candidates': [{'content': {'parts': [{'functionCall': fc}]}}]})
            for key, value in args.items():
                path = '$[' + json.dumps(key).replace('"', "'") + ']' if "'" not in key else None
                if path is None or '\\' in path:
                    continue
                pa = {'jsonPath': path, ('stringValue' if isinstance(value, str) else 'numberValue'): value}
                events.append(
                    {
                        'candidates': [
                            {'content': {'parts': [{'functionCall': {'partialArgs': [pa], 'willContinue': True}}]}}
                        ]
                    }
                )
            events.append({'candidates': [{'content': {'parts': [{'functionCall': {}}]}}]})
        events.append(
            {
                'candidates': [{'content': {'parts': []}, 'finishReason': 'STOP'}],
                'usageMetadata': {'totalTokenCount': 3},
                'responseId': 'R',
            }
        )
    else:  # ollama
        events += [
            {'model': 'o', 'message': {'role': 'assistant', 'content': '', 'thinking': r}, 'done': False}
            for r in m['reasoning']
        ]
        events += [{'model': 'o', 'message': {'role': 'assistant', 'content': t}, 'done': False} for t in m['text']]
        if calls:
            tcs = [{'function': {'name': name, 'arguments': args}} for name, args in calls]
            events.append(
                {'model': 'o', 'message': {'role': 'assistant', 'content': '', 'tool_calls': tcs}, 'done': False}
            )
        events.append(
            {
                'model': 'o',
                'message': {'role': 'assistant', 'content': ''},
                'done': True,
                'done_reason': 'stop',
                'eval_count': 2,
            }
        )
        return ndjson(events), calls
    if m['compact']:
        dumps = [json.dumps(e, separators=(',', ':'), ensure_ascii=False).encode() for e in events]
        return b''.join(b'data: ' + d + b'\n\n' for d in dumps), calls
    return sse_from_payloads(events), calls


@settings(max_examples=120, deadline=None)
@given(fmt=st.sampled_from(OTHER_FORMATS), m=messages(), data=st.data())
def test_generated_streams_split_randomly(fmt: str, m: dict[str, Any], data: st.DataObject) -> None:
    """Rust == twin == one-shot for valid streams of every format, split anywhere."""
    body, calls = render(fmt, m)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    one_shot = run(IMPLEMENTATIONS['rust'], fmt, [body])
    assert run(IMPLEMENTATIONS['rust'], fmt, pieces) == one_shot == run(IMPLEMENTATIONS['reference'], fmt, pieces)
    result, _, errors = one_shot
    assert errors == [] and result['truncated'] is False
    for impl in IMPLEMENTATIONS.values():
        agg = impl.StreamAggregator(fmt)
        texts = [agg.feed_text(p) for p in pieces] + [agg.feed_text(b'', end=True)]
        assert (''.join(t for t, _ in texts), ''.join(r for _, r in texts)) == (
            result['text'],
            result['reasoning'] or '',
        )
    assert result['text'] == ''.join(m['text'])
    assert (result['reasoning'] or '') == ''.join(m['reasoning'])
    got = [(c['name'], json.loads(c['arguments'])) for c in result['tool_calls']]
    if fmt == 'gemini':  # paths carry only keys Gemini can address here
        assert [name for name, _ in got] == [name for name, _ in calls]
    else:
        assert got == calls


def test_object_arguments_with_integers_beyond_64_bits_become_floats(core: SimpleNamespace) -> None:
    """Re-serialised values (Ollama object arguments, Gemini args, usage) hold integers as 64-bit."""
    line = {
        'message': {'tool_calls': [{'function': {'name': 'f', 'arguments': {'a': 2**64, 'b': 10**400, 'c': 7}}}]},
        'done': True,
        'eval_count': 2**70,
    }
    result, _, _ = run(core, 'ollama', [ndjson([line])])
    assert json.loads(result['tool_calls'][0]['arguments']) == {'a': float(2**64), 'b': None, 'c': 7}
    assert result['usage'] == {'eval_count': float(2**70)}


# --- regressions found by attacking the fast paths (each: Rust == twin, and the right value) ------

DEEP = b'[' * 201 + b']' * 201  # a value at depth 201 inside (jiter's skipping allowed it)


@pytest.mark.parametrize(
    ('fmt', 'body'),
    [
        ('openai-chat', b'data: {"choices":[{"delta":{"content":"x"}}],"e":' + DEEP + b'}\n\n'),
        (
            'anthropic',
            b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
            b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"e":'
            + DEEP
            + b'}\n\n',
        ),
    ],
)
def test_default_depth_limit_holds_on_the_fast_paths(core: SimpleNamespace, fmt: str, body: bytes) -> None:
    for method in ('feed', 'feed_text'):
        agg = core.StreamAggregator(fmt)
        with pytest.raises(StreamFormatError, match='data nests deeper than 200 levels'):
            getattr(agg, method)(body)
        assert agg.result()['text'] == ''


def test_index_beyond_64_bits_is_no_index(core: SimpleNamespace) -> None:
    body = (
        b'data: {"type":"content_block_start","index":9223372036854775808,"content_block":{"type":"text","text":""}}\n\n'
        b'data: {"type":"content_block_delta","index":9223372036854775808,"delta":{"type":"text_delta","text":"hi"}}\n\n'
    )
    result, _, _ = run(core, 'anthropic', [body])
    assert (result['text'], result['blocks']) == ('', [])


def test_overflowing_floats_in_re_serialised_values_become_none(core: SimpleNamespace) -> None:
    body = b'data: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":1e400,"output_tokens":2}}}\n\n'
    assert run(core, 'anthropic', [body])[0]['usage'] == {'input_tokens': None, 'output_tokens': 2}
    line = {'message': {'content': 'a'}, 'done': True}
    assert run(core, 'ollama', [ndjson([line])[:-2] + b',"eval_count":1e400}\n'])[0]['usage'] == {'eval_count': None}


def test_gemini_json_path_indices_are_ascii_digits(core: SimpleNamespace) -> None:
    parts = [{'jsonPath': '$.a[0]', 'stringValue': 'x'}, {'jsonPath': '$.a[\u0661]', 'stringValue': 'y'}]
    chunk = {'candidates': [{'content': {'parts': [{'functionCall': {'name': 'f', 'partialArgs': parts}}]}}]}
    result, _, _ = run(core, 'gemini', [sse_from_payloads([chunk])])
    assert result['tool_calls'][0]['arguments'] == '{"a":["x"]}'


def test_argument_types(core: SimpleNamespace) -> None:
    class Index:
        def __index__(self) -> int:
            return 0

    agg = core.StreamAggregator('openai-chat', max_event_bytes=2**64)
    agg.feed(b'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{"}}]}}]}\n\n')
    assert agg.partial_arguments(Index()) == {}
    with pytest.raises(IndexError, match='no tool call at index False'):
        agg.partial_arguments(False)
    with pytest.raises(TypeError, match='bool'):
        agg.feed_text(b'', end=1)
