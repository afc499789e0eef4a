"""MCP tools in the tool loop: two prefixed servers in call()/acall()/stream(), a round's calls run concurrently,
spans, the resolver, limits, augmented tools, and tool search over a 100-tool server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import stdio
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.loop_fixtures import LoopRunner, run_request
from toolweave import ChatClient
from toolweave.advisors import ToolCallingAdvisor, ToolSearchToolCallingAdvisor
from toolweave.approvals import Approve
from toolweave.chat import Prompt, ToolCallingChatOptions, ToolResponseMessage
from toolweave.mcp import McpToolCallbackProvider, McpToolCallbackResolver, ServerPrefixGenerator
from toolweave.providers import ScriptedChatModel
from toolweave.search import LexicalToolIndex
from toolweave.tools import DefaultToolCallingManager, ToolCallLimits
from toolweave.tools.augment import AgentThinking, AugmentedArgumentEvent, AugmentedToolCallbackProvider

S = ScriptedChatModel


@pytest.fixture(scope='module')
def two_servers() -> Iterator[McpToolCallbackProvider]:
    """``weather`` and ``faulty`` with every name prefixed by its server."""
    servers = [stdio('weather', 'weather.py'), stdio('faulty', 'faulty.py')]
    with McpToolCallbackProvider(servers, prefix_generator=ServerPrefixGenerator()) as provider:
        yield provider


def tool_texts(prompt: Prompt) -> list[tuple[str, str]]:
    message = prompt.messages[-1]
    assert isinstance(message, ToolResponseMessage)
    return [(r.name, r.response_data) for r in message.responses]


def answer(prompt: Prompt) -> Any:
    return S.text_response(' | '.join(text for _, text in tool_texts(prompt)))


def test_a_scripted_model_calls_tools_of_two_prefixed_servers(
    two_servers: McpToolCallbackProvider, run_loop: LoopRunner
) -> None:
    names = [cb.tool_definition.name for cb in two_servers.tool_callbacks]
    assert 'weather_get_weather' in names and 'faulty_slow' in names and 'get_weather' not in names
    model = S(
        [
            S.tool_call_response('weather_get_weather', {'city': 'Oslo'}, more=[('faulty_slow', {'seconds': 0.01})]),
            S.tool_call_response('weather_fail', {'reason': 'fog'}),
            answer,
        ]
    )
    result = run_loop(ChatClient.create(model).prompt('Weather in Oslo?').tools(two_servers))
    assert tool_texts(model.prompts[1]) == [
        ('weather_get_weather', 'Oslo: sunny, 21 C for 1 day(s) (from weather)'),
        ('faulty_slow', 'slept 0.01'),
    ]
    # an isError result is a tool error the model reads, through the exception processor
    assert tool_texts(model.prompts[2]) == [('weather_fail', 'Error executing tool fail: cannot do it: fog')]
    assert model.prompts[2].messages[-1].responses[0].is_error
    assert result.text == 'Error executing tool fail: cannot do it: fog'
    sent = {cb.tool_definition.name: cb.tool_definition for cb in model.prompts[0].options.tool_callbacks}
    assert sent['weather_get_weather'].input_schema['required'] == ['city']


@pytest.mark.parametrize('mode', ['acall', 'stream'])
def test_a_slow_server_does_not_block_the_other_calls_of_its_round(
    two_servers: McpToolCallbackProvider, mode: str, tmp_path: Path
) -> None:
    # faulty waits (up to 10 s) for the file weather's touch creates: run one after the other it never comes
    flag = str(tmp_path / 'flag')
    model = S(
        [
            S.tool_call_response('faulty_wait_for_file', {'path': flag}, more=[('weather_touch', {'path': flag})]),
            answer,
        ]
    )
    result = run_request(ChatClient.create(model).prompt('go').tools(two_servers), mode)
    assert result.text == 'saw the file | touched by weather'


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    import toolweave.mcp.callback as callback_module
    import toolweave.tools.manager as manager_module

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(manager_module, '_tracer', provider.get_tracer('toolweave'))
    monkeypatch.setattr(callback_module, '_tracer', provider.get_tracer('toolweave.mcp'))
    return exporter


def test_one_span_per_mcp_call_with_the_server_name(
    two_servers: McpToolCallbackProvider, run_loop: LoopRunner, spans: InMemorySpanExporter
) -> None:
    model = S(
        [
            S.tool_call_response('weather_get_weather', {'city': 'Oslo'}, more=[('faulty_pid', {})]),
            S.text_response('done'),
        ]
    )
    run_loop(ChatClient.create(model).prompt('go').tools(two_servers))
    finished = spans.get_finished_spans()
    mcp_spans = sorted((s for s in finished if s.name.startswith('tools/call')), key=lambda s: s.name)
    assert [(s.name, s.attributes['mcp.server.name']) for s in mcp_spans] == [
        ('tools/call get_weather', 'weather'),
        ('tools/call pid', 'faulty'),
    ]
    tool_spans = {s.name: s for s in finished if s.name.startswith('execute_tool')}
    # each MCP span is the child of the manager's execute_tool span of the same call
    assert mcp_spans[0].parent.span_id == tool_spans['execute_tool weather_get_weather'].context.span_id
    assert mcp_spans[1].parent.span_id == tool_spans['execute_tool faulty_pid'].context.span_id


def test_the_resolver_finds_mcp_tools_by_name(two_servers: McpToolCallbackProvider, run_loop: LoopRunner) -> None:
    resolver = McpToolCallbackResolver(two_servers)
    assert resolver.resolve('weather_stats') is not None and resolver.resolve('stats') is None
    manager = DefaultToolCallingManager(tool_callback_resolver=resolver, resolution_fallback_enabled=True)
    model = S([S.tool_call_response('weather_stats', {'city': 'Oslo'}), answer])
    client = ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(tool_calling_manager=manager)).build()
    options = ToolCallingChatOptions(tool_names=frozenset({'weather_stats'}))
    result = run_loop(client.prompt('stats').options(options))
    assert orjson.loads(result.text) == {'temperature': 21.5, 'humidity': 0.4}
    assert [cb.tool_definition.name for cb in model.prompts[0].options.tool_callbacks] == []


def test_limits_apply_to_mcp_tools(two_servers: McpToolCallbackProvider, run_loop: LoopRunner) -> None:
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(1, tool='faulty_pid'))
    model = S([S.tool_call_response('faulty_pid', {}, 'a', more=[('faulty_pid', {})])])
    client = ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(tool_calling_manager=manager)).build()
    chat = run_loop(client.prompt('pid twice').tools(two_servers)).response
    assert chat.result.finish_reason == 'toolCallLimitExceeded'
    assert chat.result.output.content == (
        "Tool call limit (1) exceeded for tool 'faulty_pid'. No further calls to this tool are allowed in this turn."
    )
    partial = chat.result.metadata['partialToolResponses']
    assert [r.id for r in partial] == ['a'] and int(partial[0].response_data) > 0  # the first call ran: a pid


@pytest.fixture(scope='module')
def hundred() -> Iterator[McpToolCallbackProvider]:
    with McpToolCallbackProvider(stdio('ops', 'many.py')) as provider:
        yield provider


def test_tool_search_over_a_100_tool_server(hundred: McpToolCallbackProvider, run_loop: LoopRunner) -> None:
    assert len(hundred.tool_callbacks) == 100
    model = S(
        [
            S.tool_call_response('toolSearchTool', {'query': 'cancel flight'}, 'search-1'),
            S.tool_call_response('cancel_flight', {'id': 'LH-123'}, 'call-1'),
            answer,
        ]
    )
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), max_results=3)
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    result = run_loop(client.prompt('Cancel my flight LH-123').tools(hundred).advisors(chat_memory_conversation_id='x'))
    assert result.text == 'cancel_flight done for LH-123'
    sent = [[cb.tool_definition.name for cb in p.options.tool_callbacks] for p in model.prompts]
    assert sent[0] == ['toolSearchTool']
    assert sent[1][0] == 'toolSearchTool' and 'cancel_flight' in sent[1] and len(sent[1]) <= 4
    found = orjson.loads(model.prompts[1].messages[-1].responses[0].response_data)['tools']
    assert found[0]['name'] == 'cancel_flight'


def test_async_context_manager_and_acall(two_servers: McpToolCallbackProvider) -> None:
    async def run() -> str:
        async with McpToolCallbackProvider(stdio('w', 'weather.py')) as provider:
            model = S([S.tool_call_response('get_weather', {'city': 'Kyiv'}), answer])
            response = await ChatClient.create(model).prompt('go').tools(provider).acall()
            return response.content()

    assert asyncio.run(run()) == 'Kyiv: sunny, 21 C for 1 day(s) (from weather)'


def test_augmented_mcp_tools(two_servers: McpToolCallbackProvider, run_loop: LoopRunner) -> None:
    thoughts: list[tuple[str, str]] = []

    def consumer(event: AugmentedArgumentEvent[AgentThinking]) -> None:
        thoughts.append((event.tool_definition.name, event.arguments.inner_thought))

    tools = AugmentedToolCallbackProvider(list(two_servers.tool_callbacks), consumer=consumer)
    arguments = {'city': 'Oslo', 'inner_thought': 'the user lives in Oslo'}
    model = S([S.tool_call_response('weather_get_weather', arguments), answer])
    result = run_loop(ChatClient.create(model).prompt('Weather?').tools(tools))
    assert result.text == 'Oslo: sunny, 21 C for 1 day(s) (from weather)'
    assert thoughts == [('weather_get_weather', 'the user lives in Oslo')]
    sent = {cb.tool_definition.name: cb.tool_definition for cb in model.prompts[0].options.tool_callbacks}
    assert sent['weather_get_weather'].input_schema['required'] == ['city', 'inner_thought']


def test_mcp_tools_can_require_approval(run_loop: LoopRunner) -> None:
    """``requires_approval`` (a predicate of server and tool) pauses the run before the MCP call; Approve runs it."""

    def only_weather(server: Any, tool: Any) -> bool:
        return bool(tool.name == 'get_weather')

    servers = [stdio('weather', 'weather.py')]
    with McpToolCallbackProvider(
        servers, prefix_generator=ServerPrefixGenerator(), requires_approval=only_weather
    ) as provider:
        flags = {cb.tool_definition.name: cb.tool_metadata.requires_approval for cb in provider.tool_callbacks}
        assert flags['weather_get_weather'] is True and flags['weather_fail'] is False
        model = S([S.tool_call_response('weather_get_weather', {'city': 'Oslo'}, 'c1'), answer])
        client = ChatClient.builder(model).build()
        paused = run_loop(client.prompt('Weather in Oslo?').tools(provider))
        assert paused.response.result.finish_reason == 'paused'
        assert len(model.prompts) == 1  # paused after the first round, before the call
        state = paused.response.metadata['runState']
        assert [c.name for c in state.pending] == ['weather_get_weather']
        resumed = run_loop(client.resume(state, {'c1': Approve()}).tools(provider))
        assert tool_texts(model.prompts[1]) == [
            ('weather_get_weather', 'Oslo: sunny, 21 C for 1 day(s) (from weather)')
        ]
        assert resumed.text == 'Oslo: sunny, 21 C for 1 day(s) (from weather)'


def test_requires_approval_must_be_a_bool_or_callable() -> None:
    with pytest.raises(TypeError, match='requires_approval must be a bool or a callable'):
        McpToolCallbackProvider([stdio('weather', 'weather.py')], requires_approval='yes')  # type: ignore[arg-type]
