"""Run events (toolweave.events): order in every path, provider streams, live partial arguments, sync streams."""

from __future__ import annotations

import asyncio
import copy
import functools
import gc
import json
import logging
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import local_model as local
from support.core_fixtures import corpus_streams, load_stream, stream_format
from support.loop_fixtures import LoopRunner
from support.provider_fixtures import DATA, RECORDED, build_model
from support.weather import get_weather
from toolweave import ChatClient, tool
from toolweave._native import StreamAggregator, parse_arguments
from toolweave.advisors import ToolCallingAdvisor, ToolSearchToolCallingAdvisor
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Prompt,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    Usage,
)
from toolweave.chat.stream import ToolCallDelta, ToolCallDeltas, tool_call_delta_chunk
from toolweave.events import (
    ReasoningDelta,
    RoundFinished,
    RoundStarted,
    RunEvent,
    RunFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallReady,
    ToolCallStarted,
    ToolExecutionStarted,
    ToolResult,
)
from toolweave.exceptions import ToolArgumentsError
from toolweave.memory.serialization import message_from_dict, message_to_dict
from toolweave.providers import (
    ScriptedChatModel,
)
from toolweave.providers.replay import ReplayChatModel, Reply
from toolweave.tools import DefaultToolCallingManager

S = ScriptedChatModel
STREAMS = DATA / 'streams'


def three_round_script() -> list[ChatResponse]:
    return [
        S.tool_call_response(
            'get_weather',
            {'city': 'Paris'},
            'c1',
            more=[('get_weather', {'city': 'Atlantis'}), ('get_weather', {'town': 'Oslo'})],
            usage=S.usage(10, 2),
        ),
        S.tool_call_response('get_weather', {'city': 'Rome'}, 'c4', text='One more.', usage=S.usage(20, 3)),
        S.text_response('Paris 18 C, Rome 18 C.', usage=S.usage(30, 4)),
    ]


def check_order(events: list[RunEvent], *, streamed: bool) -> None:
    """The documented order invariants of one run."""
    assert isinstance(events[-1], RunFinished)
    assert sum(isinstance(e, RunFinished) for e in events) == 1
    rounds = events[-1].round
    starts = [i for i, e in enumerate(events) if isinstance(e, RoundStarted)]
    ends = [i for i, e in enumerate(events) if isinstance(e, RoundFinished)]
    assert [events[i].round for i in starts] == [events[i].round for i in ends] == list(range(1, rounds + 1))
    for number, (start, end) in enumerate(zip(starts, ends, strict=True), 1):
        following = starts[number] if number < len(starts) else len(events)
        assert start < end < following
        assert all(e.round == number for e in events[start:following])
    if not streamed:
        assert not any(isinstance(e, (TextDelta, ReasoningDelta, ToolCallArgumentsDelta)) for e in events)
    calls: dict[tuple[int, int], list[tuple[int, RunEvent]]] = {}
    for position, event in enumerate(events):
        if isinstance(event, (ToolCallStarted, ToolCallArgumentsDelta, ToolCallReady)):
            calls.setdefault((event.round, event.index), []).append((position, event))
    by_id = {}
    for (round_no, _), seen in calls.items():
        kinds = [type(e) for _, e in seen]
        assert kinds[0] is ToolCallStarted and kinds[-1] is ToolCallReady, kinds
        assert set(kinds[1:-1]) <= {ToolCallArgumentsDelta}
        ready = seen[-1][1]
        assert isinstance(ready, ToolCallReady)
        assert seen[-1][0] < ends[round_no - 1]
        by_id[(round_no, ready.call.id)] = seen[-1][0]
    for position, event in enumerate(events):
        if isinstance(event, ToolExecutionStarted):
            assert by_id[(event.round, event.call.id)] < position
            assert position > ends[event.round - 1]
        if isinstance(event, ToolResult):
            started = [
                i
                for i, e in enumerate(events[:position])
                if isinstance(e, ToolExecutionStarted) and e.call.id == event.call_id
            ]
            assert started, event


def test_event_order_and_contents_in_every_path(run_loop: LoopRunner) -> None:
    model = ScriptedChatModel(three_round_script())
    result = run_loop(ChatClient.create(model).prompt('Weather?').tools(get_weather), events=True)
    events = result.events
    streamed = run_loop.mode == 'stream'
    check_order(events, streamed=streamed)
    assert result.text.endswith('Paris 18 C, Rome 18 C.')
    finished = [e for e in events if isinstance(e, RoundFinished)]
    assert [(e.finish_reason, e.usage) for e in finished] == [
        ('tool_calls', S.usage(10, 2)),
        ('tool_calls', S.usage(20, 3)),
        ('stop', S.usage(30, 4)),
    ]
    run = events[-1]
    assert isinstance(run, RunFinished) and run.round == 3
    assert run.usage == Usage(60, 9, 69) == result.usage
    assert run.response.text == 'Paris 18 C, Rome 18 C.'
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.round, e.index, e.call.id, e.arguments) for e in ready] == [
        (1, 0, 'c1', {'city': 'Paris'}),
        (1, 1, ready[1].call.id, {'city': 'Atlantis'}),
        (1, 2, ready[2].call.id, {'town': 'Oslo'}),
        (2, 0, 'c4', {'city': 'Rome'}),
    ]
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    assert len(results) == 4
    assert (results['c1'].text, results['c1'].is_error, results['c1'].error_type) == (
        '18 C and sunny in Paris',
        False,
        None,
    )
    failed = results[ready[1].call.id]
    assert (failed.name, failed.text, failed.is_error, failed.error_type) == (
        'get_weather',
        'no such city',
        True,
        'LookupError',
    )
    invalid = results[ready[2].call.id]
    assert invalid.is_error and invalid.error_type == 'InvalidToolArgumentsError'
    assert invalid.text.startswith("Invalid arguments for tool 'get_weather'")
    assert all(e.duration >= 0 for e in results.values())
    sent = model.prompts[1].messages[-1]
    assert isinstance(sent, ToolResponseMessage)
    assert [(r.response_data, r.is_error, r.error_type) for r in sent.responses] == [
        (results[r.id].text, results[r.id].is_error, results[r.id].error_type) for r in sent.responses
    ]
    if streamed:
        texts = [e.text for e in events if isinstance(e, TextDelta)]
        assert ''.join(texts) == 'One more.Paris 18 C, Rome 18 C.'
        deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta) and e.round == 1 and e.index == 0]
        assert [(d.delta, d.partial) for d in deltas] == [('{"city":"Paris"}', {'city': 'Paris'})]


def test_no_handler_means_no_events_and_same_answer() -> None:
    model = ScriptedChatModel(three_round_script())
    response = ChatClient.create(model).prompt('Weather?').tools(get_weather).call()
    assert response.content() == 'Paris 18 C, Rome 18 C.'


def test_on_event_with_call_and_acall() -> None:
    seen: dict[str, list[str]] = {'call': [], 'acall': []}
    threads: set[int] = set()

    def handler(kind: str) -> Callable[[RunEvent], None]:
        def on_event(event: RunEvent) -> None:
            seen[kind].append(event.kind)
            threads.add(threading.get_ident())

        return on_event

    client = ChatClient.create(ScriptedChatModel(three_round_script() * 2))
    client.prompt('Weather?').tools(get_weather).call(on_event=handler('call'))

    async def run() -> int:
        await client.prompt('Weather?').tools(get_weather).acall(on_event=handler('acall'))
        return threading.get_ident()

    loop_thread = asyncio.run(run())
    assert sorted(seen['call']) == sorted(seen['acall'])  # acall runs a turn's tools concurrently: interleaved
    assert seen['call'][0] == 'round_started' and seen['call'][-1] == 'run_finished'
    assert seen['call'].count('tool_result') == 4
    assert threads == {loop_thread} == {threading.get_ident()}  # never from the tools' worker threads


def test_a_failing_on_event_handler_is_logged_and_the_run_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: RunEvent) -> None:
        raise RuntimeError('handler bug')

    model = ScriptedChatModel(three_round_script())
    with caplog.at_level(logging.ERROR, logger='toolweave.events'):
        response = ChatClient.create(model).prompt('Weather?').tools(get_weather).call(on_event=broken)
    assert response.content() == 'Paris 18 C, Rome 18 C.'
    assert any('on_event handler raised on a round_started event' in r.getMessage() for r in caplog.records)


def test_stream_events_view_and_tool_results_arrive_while_tools_run() -> None:
    gate = threading.Event()
    seen_result_before_release: list[bool] = []

    @tool
    def slow(n: int) -> str:
        """Waits for the test."""
        if n == 2:
            assert gate.wait(10)
        return f'done {n}'

    model = ScriptedChatModel(
        [S.tool_call_response('slow', {'n': 1}, 'a', more=[('slow', {'n': 2})]), S.text_response('ok')]
    )
    manager = DefaultToolCallingManager(max_concurrency=2)  # each call its own task: results come one by one
    client = ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(manager)).build()

    async def run() -> list[RunEvent]:
        events = []
        async for event in client.prompt('go').tools(slow).stream().events():
            events.append(event)
            if isinstance(event, ToolResult) and event.call_id == 'a':
                seen_result_before_release.append(not gate.is_set())
                gate.set()
        return events

    events = asyncio.run(run())
    check_order(events, streamed=True)
    assert seen_result_before_release == [True]
    assert [e.text for e in events if isinstance(e, ToolResult)] == ['done 1', 'done 2']


def test_stream_events_raise_the_run_error_after_the_events_before_it() -> None:
    model = ScriptedChatModel([S.tool_call_response('nope', {}, 'x')])

    async def run() -> list[str]:
        kinds = []
        with pytest.raises(LookupError, match='No ToolCallback found for tool name: nope'):
            async for event in ChatClient.create(model).prompt('go').tools(get_weather).stream().events():
                kinds.append(event.kind)
        return kinds

    assert asyncio.run(run()) == [
        'round_started',
        'tool_call_started',
        'tool_call_arguments_delta',
        'tool_call_ready',
        'round_finished',
    ]


def test_tool_search_advisor_plugs_into_the_engine(run_loop: LoopRunner) -> None:
    from support.tool_search_fixtures import catalog, make_client

    model = ScriptedChatModel(
        [
            S.tool_call_response('toolSearchTool', {'query': 'weather'}, 's1'),
            S.tool_call_response('get_weather', {'city': '北京'}, 'w1'),
            S.text_response('晴'),
        ]
    )
    client = make_client(model, ToolSearchToolCallingAdvisor())
    result = run_loop(client.prompt('天气').tools(*catalog()), events=True)
    check_order(result.events, streamed=run_loop.mode == 'stream')
    assert [e.name for e in result.events if isinstance(e, ToolResult)] == ['toolSearchTool', 'get_weather']
    assert result.text == '晴'


# -- provider streams through the replay harness -------------------------------------------------


def _never(chat: ChatResponse | None) -> bool:
    return False  # one round: the events of the model's answer, no tools run


PROVIDERS: dict[str, tuple[Callable[[str], Any], str]] = {
    'openai-chat': (functools.partial(build_model, 'openai'), 'text/event-stream'),
    'anthropic': (functools.partial(build_model, 'anthropic'), 'text/event-stream'),
    'gemini': (functools.partial(build_model, 'gemini'), 'text/event-stream'),
    'openai-responses': (functools.partial(build_model, 'responses'), 'text/event-stream'),
}
GOOD_STREAMS = [n for n in corpus_streams(None) if not n.startswith(('004', '006'))]  # 004: error event, 006: none


def _stream_events(factory: Callable[[str], Any], reply: Reply) -> list[RunEvent]:
    with ReplayChatModel(factory, [reply]) as replay:
        advisor = ToolCallingAdvisor(eligibility_checker=_never)
        client = ChatClient.builder(replay).tool_calling_advisor(advisor).build()

        async def run() -> list[RunEvent]:
            events = []
            async for event in client.prompt('hi').stream().events():
                if isinstance(event, ToolCallArgumentsDelta):  # live value: copy as it arrives
                    event = ToolCallArgumentsDelta(event.round, event.index, event.delta, copy.deepcopy(event.partial))
                events.append(event)
            return events

        return asyncio.run(run())


def _one_shot_partial(text: str) -> Any:
    try:
        return parse_arguments(text, 'partial')
    except ToolArgumentsError:
        return None


@pytest.mark.parametrize('name', GOOD_STREAMS)
@pytest.mark.parametrize('piece', [0, 7])
def test_events_of_every_recorded_stream(name: str, piece: int) -> None:
    body, want = load_stream(name)
    fmt = stream_format(want)
    factory, content_type = PROVIDERS[fmt]
    events = _stream_events(factory, Reply(body=body, content_type=content_type, piece=piece))
    check_order(events, streamed=True)
    assert ''.join(e.text for e in events if isinstance(e, TextDelta)) == want['text']
    assert ''.join(e.text for e in events if isinstance(e, ReasoningDelta)) == (want['reasoning'] or '')
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.call.name, e.arguments) for e in ready] == [(c['name'], c['arguments']) for c in want['tool_calls']]
    started = {e.index: e for e in events if isinstance(e, ToolCallStarted)}
    for index, call in enumerate(want['tool_calls']):
        if call['id'] is not None:
            assert started[index].id == call['id']
        assert started[index].name == call['name']
        deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta) and e.index == index]
        text = ''
        for delta in deltas:  # partial after every fragment == one-shot partial parse of the text so far
            text += delta.delta
            assert delta.partial == _one_shot_partial(text)
        assert text == ready[index].call.arguments
    (finished,) = [e for e in events if isinstance(e, RoundFinished)]
    assert (finished.usage is None) == (want['usage'] is None)
    if finished.usage is not None:
        assert finished.usage.native == want['usage']


def test_fragments_stream_live_for_openai_chat_responses_and_anthropic() -> None:
    streams = {'openai-chat': '021', 'openai-responses': '009', 'anthropic': '005'}
    for fmt, prefix in streams.items():
        (name,) = [n for n in GOOD_STREAMS if n.startswith(prefix)]
        body, _ = load_stream(name)
        factory, content_type = PROVIDERS[fmt]
        events = _stream_events(factory, Reply(body=body, content_type=content_type))
        deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta)]
        assert len(deltas) > 3, fmt  # the arguments fill in, fragment by fragment


def test_ollama_stream_events() -> None:
    reply = Reply.from_file(RECORDED / 'ollama-tool-call.ndjson')
    events = _stream_events(functools.partial(build_model, 'ollama', model='llama3.2'), reply)
    check_order(events, streamed=True)
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ['Need the weather.']
    (ready,) = [e for e in events if isinstance(e, ToolCallReady)]
    assert (ready.call.id, ready.call.name, ready.arguments) == ('call-0', 'get_weather', {'city': 'Paris'})
    (finished,) = [e for e in events if isinstance(e, RoundFinished)]
    assert finished.usage is not None and (finished.usage.prompt_tokens, finished.usage.completion_tokens) == (180, 21)


BLOCKING = {
    'anthropic': 'anthropic-tool-use.json',
    'gemini': 'gemini-tool-call.json',
    'responses': 'responses-tool-call.json',
    'ollama': 'ollama-tool-call.json',
}


@pytest.mark.parametrize('provider', list(BLOCKING))
def test_events_of_recorded_blocking_answers(provider: str) -> None:
    events: list[RunEvent] = []
    with ReplayChatModel(functools.partial(build_model, provider), [RECORDED / BLOCKING[provider]]) as replay:
        client = ChatClient.builder(replay).tool_calling_advisor(ToolCallingAdvisor(eligibility_checker=_never)).build()
        response = client.prompt('hi').call(on_event=events.append)
    check_order(events, streamed=False)
    chat = response.chat_response()
    assert chat is not None and chat.tool_calls
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [e.call for e in ready] == list(chat.tool_calls)
    assert [e.arguments for e in ready] == [json.loads(c.arguments) for c in chat.tool_calls]


def test_two_round_loop_over_a_provider_stream() -> None:
    turns = [
        STREAMS / '021-llamacpp-gemma270m-tool-call-required.sse',
        STREAMS / '023-llamacpp-gemma270m-answer-after-tool.sse',
    ]

    @tool(name='get_weather')
    def weather(city: str, unit: str) -> str:
        """Current weather for a city."""
        return f'24 C, clear in {city}'

    with ReplayChatModel(functools.partial(build_model, 'openai', key='', model='gemma'), turns) as replay:
        events = list(ChatClient.create(replay).prompt('Weather in Paris?').tools(weather).stream().events())
    check_order(events, streamed=True)
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert (result.name, result.text, result.is_error) == ('get_weather', '24 C, clear in Paris', False)
    want = json.loads((STREAMS / '023-llamacpp-gemma270m-answer-after-tool.expected.json').read_text())['text']
    assert ''.join(e.text for e in events if isinstance(e, TextDelta) and e.round == 2) == want


@pytest.mark.parametrize('name', [n for n in GOOD_STREAMS if stream_format(load_stream(n)[1]) != 'gemini'])
def test_tool_call_deltas_join_to_the_core_aggregate(name: str) -> None:
    body, want = load_stream(name)
    fmt = stream_format(want)
    aggregator, reader = StreamAggregator(fmt), ToolCallDeltas(fmt)
    texts: dict[int, str] = {}
    for payload in aggregator.feed(body) + aggregator.finish():
        for delta in reader.feed(payload):
            texts[delta.index] = texts.get(delta.index, '') + delta.arguments
    calls = aggregator.result()['tool_calls']
    assert texts == {i: c['arguments'] for i, c in enumerate(calls)}


# -- live partial arguments --------------------------------------------------------------------


class FragmentModel:
    """A streaming model that sends one tool call as the given argument fragments, then answers."""

    def __init__(self, fragments: list[str]) -> None:
        self.fragments = fragments
        self.rounds = 0

    def call(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - streaming only
        raise NotImplementedError

    async def acall(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - streaming only
        raise NotImplementedError

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        self.rounds += 1
        if self.rounds > 1:
            yield S.text_response('done')
            return
        yield tool_call_delta_chunk(None, (ToolCallDelta(0, 'f1', 'echo', ''),))  # type: ignore[misc]
        for piece in self.fragments:
            yield tool_call_delta_chunk(None, (ToolCallDelta(0, None, None, piece),))  # type: ignore[misc]
        call = ToolCall('f1', 'function', 'echo', ''.join(self.fragments))
        yield ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),))


@tool
def echo(value: Any = None) -> str:
    """Echo."""
    return 'ok'


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(value=JSON, cuts=st.lists(st.integers(1, 10_000), max_size=30))
def test_partial_after_every_fragment_equals_the_one_shot_partial_parse(value: Any, cuts: list[int]) -> None:
    text = json.dumps({'value': value}, ensure_ascii=bool(cuts and cuts[0] % 2))
    points = sorted({c % len(text) for c in cuts} - {0})
    fragments = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    checked: list[bool] = []

    def on_event(event: RunEvent) -> None:  # called as the event is emitted: the live value is current
        if isinstance(event, ToolCallArgumentsDelta):
            so_far = ''.join(fragments[: len(checked) + 1])
            assert event.delta == fragments[len(checked)]
            assert event.partial == _one_shot_partial(so_far)
            checked.append(True)

    client = ChatClient.create(FragmentModel(fragments))  # type: ignore[arg-type]
    spec = client.prompt('go').tools(echo).advisors(**{'toolweave.on_event': on_event})

    async def run() -> str:
        return ''.join([p async for p in spec.stream().content()])

    assert asyncio.run(run()) == 'done'
    assert len(checked) == len(fragments)


def test_events_view_shows_each_partial_before_the_next_fragment() -> None:
    fragments = ['{"value": {"ci', 'ty": "Par', 'is", "days"', ': [1, 2', ', 3]}}']
    seen = []

    async def run() -> None:
        stream = ChatClient.create(FragmentModel(fragments)).prompt('go').tools(echo).stream()  # type: ignore[arg-type]
        async for event in stream.events():
            if isinstance(event, ToolCallArgumentsDelta):
                await asyncio.sleep(0)  # a slow consumer: the loop waits for it
                seen.append(copy.deepcopy(event.partial))

    asyncio.run(run())
    texts = [''.join(fragments[: i + 1]) for i in range(len(fragments))]
    assert seen == [_one_shot_partial(t) for t in texts]


# -- sync streaming, early close, collect() ------------------------------------------------------


class EndlessModel:
    """A model whose stream never ends on its own; records when it is closed."""

    def __init__(self) -> None:
        self.closed = threading.Event()
        self.sent = 0

    def call(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - streaming only
        raise NotImplementedError

    async def acall(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - streaming only
        raise NotImplementedError

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        try:
            while True:
                self.sent += 1
                yield ChatResponse((Generation(AssistantMessage(f'piece {self.sent} ')),))
                await asyncio.sleep(0.001)
        finally:
            self.closed.set()


def _stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == 'toolweave-stream']


def test_sync_content_and_events_in_plain_code() -> None:
    client = ChatClient.create(ScriptedChatModel(three_round_script() * 2))
    pieces = list(client.prompt('Weather?').tools(get_weather).stream().content())
    assert ''.join(pieces) == 'One more.Paris 18 C, Rome 18 C.'
    events = list(client.prompt('Weather?').tools(get_weather).stream().events())
    check_order(events, streamed=True)
    assert not _stream_threads()


@pytest.mark.parametrize('view', ['content', 'events', 'chat_responses'])
def test_breaking_out_of_a_sync_stream_closes_the_upstream_at_once(view: str) -> None:
    model = EndlessModel()
    stream = ChatClient.create(model).prompt('go').stream()  # type: ignore[arg-type]
    start = time.monotonic()
    for count, _ in enumerate(getattr(stream, view)(), 1):
        if count == 3:
            break
    assert model.closed.is_set()  # closed before the loop statement finished, not at garbage collection
    assert time.monotonic() - start < 5
    assert not _stream_threads()


def test_async_early_close_closes_the_upstream() -> None:
    model = EndlessModel()

    async def run() -> None:
        view = ChatClient.create(model).prompt('go').stream().content()  # type: ignore[arg-type]
        async for _ in view:
            break
        await view.aclose()

    asyncio.run(run())
    assert model.closed.is_set()


def test_sync_stream_raises_the_run_error() -> None:
    model = ScriptedChatModel([S.tool_call_response('nope', {}, 'x')])
    with pytest.raises(LookupError, match='nope'):
        list(ChatClient.create(model).prompt('go').tools(get_weather).stream().content())
    assert not _stream_threads()


def test_a_stream_is_iterated_once() -> None:
    stream = ChatClient.create(ScriptedChatModel([S.text_response('a b')])).prompt('go').stream()
    assert stream.collect() == 'a b'
    with pytest.raises(RuntimeError, match='iterated already'):
        list(stream.content())


def test_collect_inside_a_running_loop_is_a_clear_error_not_a_coroutine() -> None:
    model = ScriptedChatModel([S.text_response('one two'), S.text_response('three')])

    async def run() -> str:
        stream = ChatClient.create(model).prompt('go').stream()
        with pytest.raises(RuntimeError, match=r'cannot run inside a running event loop.*acollect'):
            stream.collect()
        return await ChatClient.create(model).prompt('go').stream().acollect()

    with warnings.catch_warnings():
        warnings.simplefilter('error')  # a never-awaited coroutine would warn
        assert asyncio.run(run()) == 'one two'
        gc.collect()


@pytest.mark.parametrize('view', ['content', 'events', 'chat_responses'])
def test_a_sync_for_loop_inside_a_running_loop_is_a_clear_error_not_a_stall(view: str) -> None:
    model = ScriptedChatModel([S.text_response('one two')])

    async def run() -> str:
        stream = ChatClient.create(model).prompt('go').stream()
        with pytest.raises(RuntimeError, match=r'`for` loop over a stream blocks.*`async for`'):
            iter(getattr(stream, view)())
        assert not _stream_threads()  # refused before a private loop thread was started
        return ''.join([piece async for piece in stream.content()])  # nothing was consumed: still usable

    assert asyncio.run(run()) == 'one two'


# -- tool errors are visible ---------------------------------------------------------------------


def test_manager_logs_failures_without_arguments(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedChatModel(three_round_script())
    with caplog.at_level(logging.WARNING, logger='toolweave.tools'):
        ChatClient.create(model).prompt('Weather?').tools(get_weather).call()
    messages = [r.getMessage() for r in caplog.records if r.name == 'toolweave.tools']
    assert len(messages) == 2
    assert messages[0].startswith("Tool 'get_weather' (call call_") and messages[0].endswith('failed: LookupError')
    assert messages[1].endswith('failed: InvalidToolArgumentsError')
    assert not any('Atlantis' in m or 'Oslo' in m for m in messages)


def test_manager_logs_arguments_when_opted_in(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedChatModel([S.tool_call_response('get_weather', {'city': 'Atlantis'}, 'c9'), S.text_response('x')])
    advisor = ToolCallingAdvisor(DefaultToolCallingManager(log_arguments=True))
    with caplog.at_level(logging.WARNING, logger='toolweave.tools'):
        ChatClient.builder(model).tool_calling_advisor(advisor).build().prompt('q').tools(get_weather).call()
    (record,) = [r for r in caplog.records if r.name == 'toolweave.tools']
    assert record.getMessage() == ('Tool \'get_weather\' (call c9) failed: LookupError; arguments: {"city":"Atlantis"}')


def test_error_flag_round_trips_through_memory_and_old_rows_load() -> None:
    message = ToolResponseMessage(
        (ToolResponse('c1', 'f', 'ok'), ToolResponse('c2', 'f', 'boom', is_error=True, error_type='ValueError'))
    )
    data = message_to_dict(message)
    assert data['responses'][0] == {'id': 'c1', 'name': 'f', 'response_data': 'ok'}  # unchanged for successes
    assert message_from_dict(data) == message
    old_row = {'type': 'tool', 'responses': [{'id': 'c1', 'name': 'f', 'response_data': 'ok'}], 'metadata': {}}
    assert message_from_dict(old_row) == ToolResponseMessage((ToolResponse('c1', 'f', 'ok'),))


# -- the real local model ----------------------------------------------------------------------------


@pytest.mark.local_model
@local.needs_local
def test_events_of_the_local_model_tool_loop() -> None:
    from toolweave.providers import LocalChatModel

    local.CALLS.clear()
    with LocalChatModel(examples=local.EXAMPLES, max_tokens=96) as model:
        spec = ChatClient.create(model).prompt('What is the weather in Tokyo?').tools(local.get_weather)
        events, text = [], ''
        for event in spec.stream().events():  # sync iteration; a live partial is checked as it arrives
            if isinstance(event, ToolCallArgumentsDelta) and event.round == 1 and event.index == 0:
                text += event.delta
                assert event.partial == _one_shot_partial(text)
            events.append(event)
    check_order(events, streamed=True)
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready and ready[0].call.name == 'get_weather'
    assert ready[0].arguments == local.assert_valid_arguments('get_weather', ready[0].call.arguments)
    assert text == ready[0].call.arguments
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.call_id, r.is_error) for r in results[:1]] == [(ready[0].call.id, False)]
    assert local.CALLS and local.CALLS[0]['tool'] == 'get_weather'
    assert ''.join(e.text for e in events if isinstance(e, TextDelta)).strip()
    usages = [e.usage for e in events if isinstance(e, RoundFinished)]
    run = events[-1]
    assert isinstance(run, RunFinished) and all(u is not None for u in usages) and run.usage is not None
    assert run.usage.total_tokens == sum(u.total_tokens for u in usages if u is not None)
