import asyncio
import logging

import pytest
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.tools import (
    DefaultToolCallingManager,
    DefaultToolExecutionExceptionProcessor,
    MethodToolCallback,
    StaticToolCallbackResolver,
    ToolCallLimitBehavior,
    ToolCallLimitExceededError,
    ToolCallLimits,
    ToolExecutionError,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    return a + b


@tool
def nothing() -> None:
    return None


@tool(return_direct=True)
def ticket(subject: str) -> str:
    return f'TICKET-1 {subject}'


@tool(return_direct=True)
def ticket_two(subject: str) -> str:
    return f'TICKET-2 {subject}'


@tool
def fails(code: int) -> str:
    raise ValueError(f'bad code {code}')


@tool
def fails_silently() -> str:
    raise ValueError()


@tool
def runs_out_of_memory() -> str:
    raise MemoryError('oom')


def call(name: str, arguments: str = '{}', id: str | None = None) -> ToolCall:
    return ToolCall(id or f'call_{name}', 'function', name, arguments)


def response(*calls: ToolCall) -> ChatResponse:
    return ChatResponse((Generation(AssistantMessage(None, calls), 'tool_calls'),))


def prompt(*tools: object, history: tuple = (), context: dict | None = None) -> Prompt:
    callbacks = tuple(MethodToolCallback(t) for t in tools)  # type: ignore[arg-type]
    options = ToolCallingChatOptions(tool_callbacks=callbacks, tool_context=context or {})
    return Prompt((SystemMessage('sys'), UserMessage('hi'), *history), options)


def responses(result) -> list[tuple[str, str, str]]:
    last = result.conversation_history[-1]
    assert isinstance(last, ToolResponseMessage)
    return [(r.id, r.name, r.response_data) for r in last.responses]


def test_history_order_and_results():
    manager = DefaultToolCallingManager()
    p = prompt(add, nothing)
    chat = response(call('add', '{"a": 1, "b": 2}', 'c1'), call('nothing', '', 'c2'))
    result = manager.execute_tool_calls(p, chat)
    assert result.conversation_history[:2] == p.messages
    assert result.conversation_history[2] == chat.generations[0].output
    assert responses(result) == [('c1', 'add', '3'), ('c2', 'nothing', 'Done')]
    assert result.return_direct is False


def test_no_tool_call_is_an_error():
    manager = DefaultToolCallingManager()
    with pytest.raises(ValueError, match='No tool call requested by the chat model'):
        manager.execute_tool_calls(prompt(add), ChatResponse((Generation(AssistantMessage('hello')),)))


def test_first_generation_with_tool_calls_is_used():
    manager = DefaultToolCallingManager()
    chat = ChatResponse(
        (
            Generation(AssistantMessage('text only')),
            Generation(AssistantMessage(None, (call('add', '{"a": 2, "b": 2}'),))),
        )
    )
    assert responses(manager.execute_tool_calls(prompt(add), chat)) == [('call_add', 'add', '4')]


def test_unknown_tool_warns_then_raises(caplog):
    manager = DefaultToolCallingManager()
    with (
        caplog.at_level(logging.WARNING, logger='toolweave.tools'),
        pytest.raises(LookupError, match='No ToolCallback found for tool name: ad'),
    ):
        manager.execute_tool_calls(prompt(add), response(call('ad')))
    assert "LLM may have adapted the tool name 'ad'" in caplog.records[0].getMessage()


def test_resolver_only_with_fallback_enabled():
    resolver = StaticToolCallbackResolver([MethodToolCallback(add)])
    off = DefaultToolCallingManager(tool_callback_resolver=resolver)
    with pytest.raises(LookupError, match='No ToolCallback found for tool name: add'):
        off.execute_tool_calls(prompt(), response(call('add', '{"a": 1, "b": 1}')))
    on = DefaultToolCallingManager(tool_callback_resolver=resolver, resolution_fallback_enabled=True)
    assert responses(on.execute_tool_calls(prompt(), response(call('add', '{"a": 1, "b": 1}')))) == [
        ('call_add', 'add', '2')
    ]


def test_request_tools_win_over_resolver():
    @tool(name='add')
    def other_add(a: int, b: int) -> int:
        return -1

    resolver = StaticToolCallbackResolver([MethodToolCallback(other_add)])
    manager = DefaultToolCallingManager(tool_callback_resolver=resolver, resolution_fallback_enabled=True)
    assert responses(manager.execute_tool_calls(prompt(add), response(call('add', '{"a": 1, "b": 1}'))))[0][2] == '2'


def test_return_direct_is_folded_with_and():
    manager = DefaultToolCallingManager()
    both = manager.execute_tool_calls(
        prompt(ticket, ticket_two), response(call('ticket', '{"subject": "a"}'), call('ticket_two', '{"subject": "b"}'))
    )
    assert both.return_direct is True
    generations = both.build_generations()
    assert [(g.output.content, g.finish_reason, dict(g.metadata)) for g in generations] == [
        ('TICKET-1 a', 'returnDirect', {'toolId': 'call_ticket', 'toolName': 'ticket'}),
        ('TICKET-2 b', 'returnDirect', {'toolId': 'call_ticket_two', 'toolName': 'ticket_two'}),
    ]
    mixed = manager.execute_tool_calls(
        prompt(ticket, add), response(call('ticket', '{"subject": "a"}'), call('add', '{"a": 1, "b": 1}'))
    )
    assert mixed.return_direct is False


def test_tool_errors_become_text():
    manager = DefaultToolCallingManager()
    result = manager.execute_tool_calls(
        prompt(fails, fails_silently, add),
        response(call('fails', '{"code": 7}'), call('fails_silently'), call('add', '{"a": "x"}')),
    )
    texts = [r[2] for r in responses(result)]
    assert texts[0] == 'bad code 7'
    assert texts[1] == 'Exception occurred in tool: fails_silently (ValueError)'
    assert texts[2].startswith("Invalid arguments for tool 'add': a: Input should be a valid integer")
    assert 'b: missing required argument' in texts[2]


def test_key_error_text_names_the_exception():
    @tool
    def lookup(key: str) -> str:
        return {'a': '1'}[key]

    result = DefaultToolCallingManager().execute_tool_calls(prompt(lookup), response(call('lookup', '{"key": "zz"}')))
    assert responses(result)[0][2] == "KeyError: 'zz'"


def test_invalid_json_arguments_become_text():
    manager = DefaultToolCallingManager()
    result = manager.execute_tool_calls(prompt(add), response(call('add', '{"a": 1,')))
    assert 'invalid tool arguments' in responses(result)[0][2].lower()


def test_exception_processor_rethrow_rules():
    p = prompt(fails, runs_out_of_memory)
    with pytest.raises(ValueError, match='bad code 1'):
        DefaultToolCallingManager(
            exception_processor=DefaultToolExecutionExceptionProcessor(rethrow=[LookupError, ValueError])
        ).execute_tool_calls(p, response(call('fails', '{"code": 1}')))
    with pytest.raises(ToolExecutionError, match='bad code 1'):
        DefaultToolCallingManager(
            exception_processor=DefaultToolExecutionExceptionProcessor(always_throw=True)
        ).execute_tool_calls(p, response(call('fails', '{"code": 1}')))
    with pytest.raises(MemoryError):
        DefaultToolCallingManager().execute_tool_calls(p, response(call('runs_out_of_memory')))


def test_tool_context_is_a_copy_with_history():
    seen = {}

    from toolweave.tools import ToolContext

    @tool
    def whoami(ctx: ToolContext) -> str:
        seen.update(ctx)
        return ctx['user']

    options_context = {'user': 'ada'}
    p = prompt(whoami, context=options_context)
    result = DefaultToolCallingManager().execute_tool_calls(p, response(call('whoami')))
    assert responses(result)[0][2] == 'ada'
    assert seen['user'] == 'ada'
    assert seen['TOOL_CALL_HISTORY'][-1].tool_calls[0].name == 'whoami'
    assert options_context == {'user': 'ada'}


def history_with_prior_calls(name: str, n: int) -> tuple:
    prior = tuple(ToolResponse(f'p{i}', name, 'x') for i in range(n))
    return (AssistantMessage(None, tuple(call(name, '{}', f'p{i}') for i in range(n))), ToolResponseMessage(prior))


def test_limit_counts_from_last_user_message_and_throws_with_partial_responses():
    limits = ToolCallLimits().max_calls_per_tool(3)
    manager = DefaultToolCallingManager(limits=limits)
    old_turn = history_with_prior_calls('add', 3)
    new_turn = history_with_prior_calls('add', 1)
    p = prompt(add, history=(*old_turn, UserMessage('again'), *new_turn))
    chat = response(
        call('add', '{"a": 1, "b": 1}', 'x1'),
        call('add', '{"a": 1, "b": 2}', 'x2'),
        call('add', '{"a": 1, "b": 3}', 'x3'),
    )
    with pytest.raises(ToolCallLimitExceededError) as info:
        manager.execute_tool_calls(p, chat)
    assert str(info.value) == "Tool call limit (3) exceeded for tool 'add'"  # Spring's exception message
    assert (info.value.tool_name, info.value.limit) == ('add', 3)
    assert (
        info.value.breach_text
        == "Tool call limit (3) exceeded for tool 'add'. No further calls to this tool are allowed in this turn."
    )
    assert [(r.id, r.response_data) for r in info.value.partial_responses] == [('x1', '2'), ('x2', '3')]


def test_limit_return_error_response_goes_on():
    limits = ToolCallLimits().max_total_tool_calls(2).with_behavior(ToolCallLimitBehavior.RETURN_ERROR_RESPONSE)
    manager = DefaultToolCallingManager(limits=limits)
    chat = response(
        call('add', '{"a": 1, "b": 1}', 'a'), call('nothing', '{}', 'b'), call('add', '{"a": 2, "b": 2}', 'c')
    )
    result = manager.execute_tool_calls(prompt(add, nothing), chat)
    assert responses(result) == [
        ('a', 'add', '2'),
        ('b', 'nothing', 'Done'),
        ('c', 'add', 'Total tool call limit (2) exceeded for this turn. No further tool calls are allowed.'),
    ]


def test_limit_checked_before_lookup_and_knobs():
    # an excluded tool has no per-tool limit but still counts toward the total (Spring 2.0.1)
    limits = ToolCallLimits().max_calls_per_tool(1).unlimited_calls_per_tool('add').exclude_tool_from_limit('nothing')
    limits = limits.max_total_tool_calls(5).with_behavior(ToolCallLimitBehavior.RETURN_ERROR_RESPONSE)
    manager = DefaultToolCallingManager(limits=limits)
    chat = response(
        call('add', '{"a": 1, "b": 1}', '1'),
        call('add', '{"a": 1, "b": 1}', '2'),
        *(call('nothing', '{}', f'n{i}') for i in range(2)),
        call('missing', '{}', 'm1'),
        call('missing', '{}', 'm2'),
    )
    # 'missing' is not a tool: the first call passes the limit check (5th call) then fails lookup
    with pytest.raises(LookupError, match='No ToolCallback found for tool name: missing'):
        manager.execute_tool_calls(prompt(add, nothing), chat)
    limits_tight = ToolCallLimits().max_total_tool_calls(1).with_behavior(ToolCallLimitBehavior.RETURN_ERROR_RESPONSE)
    result = DefaultToolCallingManager(limits=limits_tight).execute_tool_calls(
        prompt(add), response(call('add', '{"a": 1, "b": 1}', '1'), call('unknown', '{}', '2'))
    )
    assert responses(result)[1][2].startswith('Total tool call limit (1) exceeded')


def test_limit_validation():
    with pytest.raises(ValueError, match='positive int'):
        ToolCallLimits().max_calls_per_tool(0)


def test_async_execution_matches_sync():
    @tool
    async def mul(a: int, b: int) -> int:
        return a * b

    manager = DefaultToolCallingManager()
    chat = response(
        call('mul', '{"a": 3, "b": 4}', 'm'), call('add', '{"a": 3, "b": 4}', 'a'), call('fails', '{"code": 2}', 'f')
    )
    result = asyncio.run(manager.aexecute_tool_calls(prompt(mul, add, fails), chat))
    assert responses(result) == [('m', 'mul', '12'), ('a', 'add', '7'), ('f', 'fails', 'bad code 2')]


def test_spans_follow_genai_conventions():
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan

    captured = []

    class Recorder(trace.Tracer):
        def start_span(
            self,
            name,
            context=None,
            kind=trace.SpanKind.INTERNAL,
            attributes=None,
            links=None,
            start_time=None,
            record_exception=True,
            set_status_on_exception=True,
        ):
            captured.append((name, dict(attributes or {})))
            return NonRecordingSpan(trace.INVALID_SPAN_CONTEXT)

        def start_as_current_span(self, name, *args, **kwargs):  # type: ignore[override]
            import contextlib

            @contextlib.contextmanager
            def cm():
                yield self.start_span(name, attributes=kwargs.get('attributes'))

            return cm()

    import toolweave.tools.manager as manager_module

    original = manager_module._tracer
    manager_module._tracer = Recorder()
    try:
        DefaultToolCallingManager(record_content=True).execute_tool_calls(
            prompt(add), response(call('add', '{"a": 1, "b": 1}', 'c9'))
        )
    finally:
        manager_module._tracer = original
    assert captured[0][0] == 'execute_tool add'
    assert captured[0][1]['gen_ai.tool.name'] == 'add'
    assert captured[0][1]['gen_ai.tool.call.id'] == 'c9'
    assert captured[0][1]['gen_ai.tool.call.arguments'] == '{"a": 1, "b": 1}'


def test_spans_reach_a_tracer_provider_set_after_import(monkeypatch):
    """No span work without a tracing SDK, yet a provider set later (through the default proxy tracer) gets them."""
    import toolweave.tools.manager as manager_module
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.setattr(manager_module, '_tracer', trace.ProxyTracer('toolweave'))
    monkeypatch.setattr(trace, '_TRACER_PROVIDER', None)
    manager = DefaultToolCallingManager()
    chat = response(call('add', '{"a": 1, "b": 1}', 'c1'))
    assert manager_module._tracing_off()
    assert responses(manager.execute_tool_calls(prompt(add), chat)) == [('c1', 'add', '2')]

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, '_TRACER_PROVIDER', provider)  # as trace.set_tracer_provider(provider) does
    assert not manager_module._tracing_off()
    assert responses(manager.execute_tool_calls(prompt(add), chat)) == [('c1', 'add', '2')]
    assert asyncio.run(manager.aexecute_tool_calls(prompt(add), chat)).conversation_history[-1].responses[0].id == 'c1'
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ['execute_tool add', 'execute_tool add']
    assert spans[0].attributes['gen_ai.tool.call.id'] == 'c1'
