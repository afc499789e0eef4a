"""The tool loop's fast paths (issue 13's overhead work) keep every behaviour they skip work for.

The manager reads each request's tools once (a table per options object), builds a ``ToolContext``
only for tools that read one, checks tracing once per batch and round, and the chain finds its next
advisor once: these tests pin what a caller sees through ``call()``, ``acall()`` and ``stream()``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolweave import ChatClient
from toolweave.advisors import ChatClientRequest
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Prompt,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.providers import ScriptedChatModel
from toolweave.tools import (
    DefaultToolCallingManager,
    FunctionToolCallback,
    MethodToolCallback,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    tool,
)
from toolweave.tools.converter import DefaultToolCallResultConverter

S = ScriptedChatModel


class Recording:
    """A hand-written ``ToolCallback`` (no ``takes_tool_context``): records the context each call gets."""

    def __init__(self, name: str, takes: bool | None = None) -> None:
        self.tool_definition = ToolDefinition(name, f'{name} tool', {'type': 'object', 'properties': {}})
        self.tool_metadata = ToolMetadata()
        self.contexts: list[ToolContext | None] = []
        if takes is not None:
            self.takes_tool_context = takes

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        self.contexts.append(tool_context)
        return f'{self.tool_definition.name} ran'

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        return self.call(tool_input, tool_context)


def _two_rounds(name: str) -> ScriptedChatModel:
    return ScriptedChatModel(
        [S.tool_call_response(name, {}, 'c1'), S.tool_call_response(name, {}, 'c2'), S.text_response('ok')]
    )


def test_a_callback_that_does_not_say_gets_a_context_with_the_history(run_loop):
    recording = Recording('lookup')
    result = run_loop(
        ChatClient.create(_two_rounds('lookup')).prompt('go').tools(recording).tool_context({'user': 'u1'})
    )
    assert result.text.endswith('ok')
    assert len(recording.contexts) == 2
    for context in recording.contexts:
        assert isinstance(context, ToolContext)
        assert context['user'] == 'u1'
    first, second = (c[ToolContext.TOOL_CALL_HISTORY] for c in recording.contexts)  # type: ignore[index]
    assert [type(m).__name__ for m in first] == ['UserMessage', 'AssistantMessage']
    assert [type(m).__name__ for m in second] == [
        'UserMessage',
        'AssistantMessage',
        'ToolResponseMessage',
        'AssistantMessage',
    ]


def test_a_callback_that_reads_no_context_gets_none(run_loop):
    recording = Recording('lookup', takes=False)
    run_loop(ChatClient.create(_two_rounds('lookup')).prompt('go').tools(recording).tool_context({'user': 'u1'}))
    assert recording.contexts == [None, None]


def test_function_tools_say_whether_they_read_a_context():
    def plain(a: int) -> int:
        return a

    def with_context(a: int, context: ToolContext) -> str:
        return str(context['user'])

    assert MethodToolCallback(plain).takes_tool_context is False
    assert MethodToolCallback(with_context).takes_tool_context is True
    assert FunctionToolCallback.builder('p', lambda value: value).input_type(dict).build().takes_tool_context is False

    def reads(value: dict[str, Any], context: ToolContext) -> str:
        return str(context['user'])

    assert FunctionToolCallback.builder('r', reads).build().takes_tool_context is True

    class Audited(MethodToolCallback):  # an overridden call may read the context: it gets one
        def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
            return f'{tool_context["user"] if tool_context else None}: {super().call(tool_input, tool_context)}'

    assert Audited(plain).takes_tool_context is True


def test_a_context_reading_tool_gets_the_values_in_every_path(run_loop):
    @tool
    def whoami(context: ToolContext) -> str:
        """Who asks."""
        return str(context['user'])

    model = ScriptedChatModel([S.tool_call_response('whoami', {}, 'c1'), S.text_response('ok')])
    result = run_loop(ChatClient.create(model).prompt('go').tools(whoami).tool_context({'user': 'u7'}))
    tool_messages = [m for m in model.prompts[-1].messages if isinstance(m, ToolResponseMessage)]
    assert tool_messages[0].responses[0].response_data == 'u7'
    assert result.text.endswith('ok')


def _batch(name: str) -> ChatResponse:
    return ChatResponse((Generation(AssistantMessage(None, (ToolCall('c1', 'function', name, '{}'),)), 'tool_calls'),))


def _answer(result: Any) -> str:
    last = result.conversation_history[-1]
    assert isinstance(last, ToolResponseMessage)
    return str(last.responses[0].response_data)


def test_the_first_tool_of_a_name_runs_and_each_options_object_has_its_own_table():
    first, second, third = Recording('same'), Recording('same'), Recording('same')
    first.call = lambda tool_input, tool_context=None: 'first'  # type: ignore[method-assign]
    second.call = lambda tool_input, tool_context=None: 'second'  # type: ignore[method-assign]
    third.call = lambda tool_input, tool_context=None: 'third'  # type: ignore[method-assign]
    manager = DefaultToolCallingManager()
    duplicated = ToolCallingChatOptions(tool_callbacks=(first, second))  # the manager alone does not refuse these
    history = (UserMessage('go'),)
    assert _answer(manager.execute_tool_calls(Prompt(history, duplicated), _batch('same'))) == 'first'
    assert _answer(manager.execute_tool_calls(Prompt(history, duplicated), _batch('same'))) == 'first'
    other = ToolCallingChatOptions(tool_callbacks=(third,))  # another request: its own tools, not the last table
    assert _answer(manager.execute_tool_calls(Prompt(history, other), _batch('same'))) == 'third'
    assert _answer(asyncio.run(manager.aexecute_tool_calls(Prompt(history, duplicated), _batch('same')))) == 'first'


def test_round_spans_reach_a_tracer_provider_set_after_the_first_run(monkeypatch, run_loop):
    import toolweave.advisors.tool_calling as loop_module
    import toolweave.tools.manager as manager_module

    monkeypatch.setattr(loop_module, '_tracer', trace.ProxyTracer('toolweave'))
    monkeypatch.setattr(manager_module, '_tracer', trace.ProxyTracer('toolweave'))
    monkeypatch.setattr(trace, '_TRACER_PROVIDER', None)

    @tool
    def ping(n: int) -> int:
        """Ping."""
        return n

    def spec() -> Any:
        model = ScriptedChatModel([S.tool_call_response('ping', {'n': 1}, 'c1'), S.text_response('done')])
        return ChatClient.create(model).prompt('go').tools(ping)

    assert run_loop(spec()).text.endswith('done')  # no SDK: nothing recorded, nothing to record into
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, '_TRACER_PROVIDER', provider)  # as trace.set_tracer_provider(provider) does
    assert run_loop(spec()).text.endswith('done')
    names = sorted(s.name for s in exporter.get_finished_spans())
    assert names == ['execute_tool ping', 'toolweave.round', 'toolweave.round']
    round_one = next(s for s in exporter.get_finished_spans() if s.attributes.get('toolweave.round.number') == 1)
    tool_span = next(s for s in exporter.get_finished_spans() if s.name == 'execute_tool ping')
    assert tool_span.parent is not None and tool_span.parent.span_id == round_one.context.span_id


@pytest.mark.parametrize(
    'value', [0, -3, 2**70, 1.5, float('inf'), True, False, {}, {'a': [1, 2], 'b': None}, {'raw': b'\x89PNG'}, {1: 'x'}]
)
def test_plain_json_results_are_written_as_before(value):
    from toolweave.tools import converter

    def outcome(write: Any) -> tuple[str, str]:
        try:
            return 'text', write(value)
        except TypeError as error:  # an integer beyond 64 bits: the same error either way
            return 'error', str(error)

    assert converter._media(value) is None  # the full path looks for a content part first, finds none,
    assert outcome(DefaultToolCallResultConverter().convert) == outcome(converter._json)  # then writes JSON


def test_with_prompt_keeps_a_request_subclass():
    class Tagged(ChatClientRequest):
        pass

    request = Tagged(Prompt((UserMessage('a'),)), {'k': 1})
    changed = request.with_prompt(Prompt((UserMessage('b'),)))
    assert type(changed) is Tagged and changed.context is request.context
    assert changed.prompt.messages == (UserMessage('b'),)
    plain = ChatClientRequest(Prompt((UserMessage('a'),)), {'k': 2}).with_prompt(Prompt((UserMessage('c'),)))
    assert type(plain) is ChatClientRequest and plain.context == {'k': 2}
