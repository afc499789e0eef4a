"""Spring AI 2.0.1 fidelity of the tool loop and the client (issue 12), each behaviour in call(), acall() and stream().

Model default tools are executable, a custom eligibility checker works alike in every path, the
``before`` hooks' options run the tools, the request's system message without history, zero usage
counts as no usage, Spring's advisor names, ``None`` arguments named, and rounds cut off by the
output-token bound (finish reason ``length``) not executed unless asked.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from toolweave import ChatClient, tool
from toolweave.advisors import ChatClientRequest, ToolCallingAdvisor
from toolweave.advisors.chain import DefaultAroundAdvisorChain
from toolweave.advisors.eligibility import StrictToolExecutionEligibilityChecker
from toolweave.advisors.memory import MessageChatMemoryAdvisor
from toolweave.advisors.model_advisors import ChatModelCallAdvisor, ChatModelStreamAdvisor
from toolweave.advisors.usage import UsageAccumulator
from toolweave.chat import ChatResponse, Prompt, SystemMessage, ToolResponseMessage, Usage, UserMessage
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.events import RoundFinished, RunFinished, ToolCallReady, ToolExecutionStarted
from toolweave.providers import ScriptedChatModel
from toolweave.providers._base import normalized
from toolweave.tools import DefaultToolCallingManager
from toolweave.tools.manager import ToolExecutionResult
from toolweave.tools.provider import to_tool_callbacks

S = ScriptedChatModel
ran: list[str] = []


@tool
def ping(n: int) -> str:
    """Ping."""
    ran.append(f'ping {n}')
    return f'pong {n}'


@tool
def extra(n: int) -> str:
    """A tool only a before hook adds."""
    ran.append(f'extra {n}')
    return f'extra {n}'


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def client_with(model: Any, advisor: ToolCallingAdvisor | None = None) -> ChatClient:
    builder = ChatClient.builder(model)
    return (builder.tool_calling_advisor(advisor) if advisor is not None else builder).build()


# -- tools in the model's default options ---------------------------------------------------------------


class DefaultsModel(ScriptedChatModel):
    """A scripted model with provider-style ``default_options`` (as every provider takes them)."""

    def __init__(self, responses: list[Any], default_options: ToolCallingChatOptions) -> None:
        super().__init__(responses)
        self.default_options = default_options


def test_tools_in_the_models_default_options_are_executable(run_loop):
    defaults = ToolCallingChatOptions(tool_callbacks=to_tool_callbacks(ping), tool_context={'k': 'model'})
    model = DefaultsModel([S.tool_call_response('ping', {'n': 7}), S.text_response('pong it is')], defaults)
    result = run_loop(client_with(model).prompt('go'))
    assert result.text == 'pong it is'
    assert ran == ['ping 7']
    sent = model.prompts[0].options
    assert isinstance(sent, ToolCallingChatOptions)
    assert [c.tool_definition.name for c in sent.tool_callbacks] == ['ping']
    assert sent.tool_context == {'k': 'model'}


def test_request_tools_replace_the_models_default_tools_as_the_provider_merges_them(run_loop):
    defaults = ToolCallingChatOptions(tool_callbacks=to_tool_callbacks(extra))
    model = DefaultsModel([S.tool_call_response('ping', {'n': 1}), S.text_response('ok')], defaults)
    run_loop(client_with(model).prompt('go').tools(ping))
    assert [c.tool_definition.name for c in model.prompts[0].options.tool_callbacks] == ['ping']
    assert ran == ['ping 1']


# -- a custom eligibility checker, the same in every path ------------------------------------------------


class NeverExecute:
    def __call__(self, chat_response: ChatResponse | None) -> bool:
        return False


def test_a_custom_checker_that_refuses_returns_the_tool_calls_in_every_path(run_loop):
    model = S([S.tool_call_response('ping', {'n': 1}, text='calling ping')])
    result = run_loop(
        client_with(model, ToolCallingAdvisor(eligibility_checker=NeverExecute())).prompt('go').tools(ping)
    )
    assert result.text == 'calling ping'
    assert [c.name for c in result.response.tool_calls] == ['ping']
    assert result.response.result.finish_reason == 'tool_calls'
    assert ran == []
    assert model.remaining == 0


def test_a_custom_checker_decides_in_streaming_as_in_blocking(run_loop):
    class OnlyPing:
        def __call__(self, chat_response: ChatResponse | None) -> bool:
            return chat_response is not None and any(c.name == 'ping' for c in chat_response.tool_calls)

    model = S([S.tool_call_response('ping', {'n': 1}), S.tool_call_response('extra', {'n': 2}, text='extra?')])
    client = client_with(model, ToolCallingAdvisor(eligibility_checker=OnlyPing()))
    result = run_loop(client.prompt('go').tools(ping, extra))
    assert ran == ['ping 1']
    assert [c.name for c in result.response.tool_calls] == ['extra']
    assert result.text == 'extra?'
    if run_loop.mode == 'stream':  # the first round's tool-call chunk stayed inside, the refused one came out
        assert [c.name for chunk in result.chunks for c in chunk.tool_calls] == ['extra']


def test_the_strict_checker_streams_what_it_refuses_and_runs_what_it_accepts(run_loop):
    model = S(
        [S.tool_call_response('ping', {'n': 1}), S.tool_call_response('ping', {'n': 2}, finish_reason='stop')],
    )
    advisor = ToolCallingAdvisor(eligibility_checker=StrictToolExecutionEligibilityChecker())
    result = run_loop(client_with(model, advisor).prompt('go').tools(ping))
    assert ran == ['ping 1']
    assert result.response.result.finish_reason == 'stop'
    assert [c.name for c in result.response.tool_calls] == ['ping']


# -- options changed in the before hooks run the tools ---------------------------------------------------


class AddsExtra(ToolCallingAdvisor):
    """Adds a tool and a tool-context value before every round (both paths)."""

    def _more(self, request: ChatClientRequest) -> ChatClientRequest:
        options = request.prompt.options
        assert isinstance(options, ToolCallingChatOptions)
        changed = ToolCallingChatOptions(
            tool_callbacks=(*options.tool_callbacks, *to_tool_callbacks(extra)),
            tool_context={**options.tool_context, 'tenant': 'hooked'},
        )
        return request.with_prompt(Prompt(request.prompt.messages, changed))

    def do_before_call(self, request: ChatClientRequest, chain: Any) -> ChatClientRequest:
        return self._more(request)

    def do_before_stream(self, request: ChatClientRequest, chain: Any) -> ChatClientRequest:
        return self._more(request)


class RecordingManager(DefaultToolCallingManager):
    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[Prompt] = []

    def execute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        self.prompts.append(prompt)
        return super().execute_tool_calls(prompt, chat_response)

    async def aexecute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        self.prompts.append(prompt)
        return await super().aexecute_tool_calls(prompt, chat_response)


def test_options_changed_in_the_before_hook_are_the_options_the_tools_run_with(run_loop):
    manager = RecordingManager()
    model = S([S.tool_call_response('extra', {'n': 3}), S.text_response('done')])
    result = run_loop(client_with(model, AddsExtra(manager)).prompt('go').tools(ping))
    assert result.text == 'done'
    assert ran == ['extra 3']
    options = manager.prompts[0].options
    assert isinstance(options, ToolCallingChatOptions)
    assert options.tool_context == {'tenant': 'hooked'}
    assert [c.tool_definition.name for c in options.tool_callbacks] == ['ping', 'extra']


# -- without history: the request's system message -------------------------------------------------------


class InjectsSystem(DefaultToolCallingManager):
    """A manager whose history starts with a system message of its own."""

    def _inject(self, result: ToolExecutionResult) -> ToolExecutionResult:
        history = tuple(m for m in result.conversation_history if not isinstance(m, SystemMessage))
        return ToolExecutionResult((SystemMessage('from the manager'), *history), result.return_direct)

    def execute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        return self._inject(super().execute_tool_calls(prompt, chat_response))

    async def aexecute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        return self._inject(await super().aexecute_tool_calls(prompt, chat_response))


@pytest.mark.parametrize('system', ['Be brief.', None])
def test_without_history_the_system_message_each_round_is_the_requests(run_loop, system):
    model = S([S.tool_call_response('ping', {'n': 1}), S.text_response('ok')])
    advisor = ToolCallingAdvisor(InjectsSystem(), conversation_history_enabled=False)
    spec = client_with(model, advisor).prompt('go').tools(ping)
    run_loop(spec.system(system) if system is not None else spec)
    second = model.prompts[1].messages
    assert isinstance(second[-1], ToolResponseMessage)
    if system is None:
        assert len(second) == 1
    else:
        assert second[0] == SystemMessage('Be brief.')
        assert len(second) == 2


# -- usage: zero total tokens is no usage ----------------------------------------------------------------


def test_zero_usage_is_no_usage_and_the_final_correction_carries_the_total(run_loop):
    zero = Usage(0, 0, 0)
    model = S([S.tool_call_response('ping', {'n': 1}, usage=S.usage(10, 5)), S.text_response('ok', usage=zero)])
    result = run_loop(client_with(model).prompt('go').tools(ping))
    assert result.usage is not None and result.usage.total_tokens == 15
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (10, 5)
    if run_loop.mode == 'stream':
        with_usage = [c for c in result.chunks if c.usage is not None]
        assert [c.usage.total_tokens for c in with_usage] == [0, 15]  # the zero chunk not stamped
        assert with_usage[-1].generations == ()  # the usage-only correction


def test_a_zero_usage_round_adds_nothing_to_the_sum():
    accumulator = UsageAccumulator()
    accumulator.add_round_response(S.text_response('a', usage=Usage(0, 0, 0)))
    assert accumulator.rounds == 0
    assert accumulator.accumulated_usage is None
    accumulator.add_round_response(S.text_response('b', usage=S.usage(2, 3)))
    chunk = S.text_response('c', usage=Usage(0, 0, 0))
    assert accumulator.apply_previous_accumulated_usage_to_chunk(chunk) is chunk
    correction = accumulator.emit_final_usage_correction_if_necessary(chunk)
    assert correction is not None and correction.usage == S.usage(2, 3)


# -- Spring's names --------------------------------------------------------------------------------------


def test_advisor_names_are_springs():
    model = S([])
    assert ToolCallingAdvisor().name == 'Tool Calling Advisor'
    assert ChatModelCallAdvisor(model).name == 'call'
    assert ChatModelStreamAdvisor(model).name == 'stream'


# -- None arguments --------------------------------------------------------------------------------------


def _request() -> ChatClientRequest:
    return ChatClientRequest(Prompt((UserMessage('hi'),), ToolCallingChatOptions()))


def _stream_first(advisor: Any, request: Any, chain: Any) -> None:
    asyncio.run(anext(advisor.advise_stream(request, chain)))


NONE_CASES = {
    'chain(None)': (lambda: DefaultAroundAdvisorChain(None), 'advisors'),
    'chain([None])': (lambda: DefaultAroundAdvisorChain([None]), 'advisors'),
    'chain.copy(None)': (lambda: DefaultAroundAdvisorChain([ToolCallingAdvisor()]).copy(None), 'after'),
    'chain.next_call(None)': (
        lambda: DefaultAroundAdvisorChain([ChatModelCallAdvisor(S([]))]).next_call(None),
        'request',
    ),
    'chain.next_stream(None)': (
        lambda: DefaultAroundAdvisorChain([ChatModelStreamAdvisor(S([]))]).next_stream(None),
        'request',
    ),
    'advise_call(None, chain)': (
        lambda: ToolCallingAdvisor().advise_call(None, DefaultAroundAdvisorChain([])),
        'request',
    ),
    'advise_call(request, None)': (lambda: ToolCallingAdvisor().advise_call(_request(), None), 'chain'),
    'advise_stream(None, chain)': (
        lambda: _stream_first(ToolCallingAdvisor(), None, DefaultAroundAdvisorChain([])),
        'request',
    ),
    'aadvise_call(None, chain)': (
        lambda: asyncio.run(ToolCallingAdvisor().aadvise_call(None, DefaultAroundAdvisorChain([]))),
        'request',
    ),
    'ChatModelCallAdvisor(None)': (lambda: ChatModelCallAdvisor(None), 'model'),
    'ChatModelStreamAdvisor(None)': (lambda: ChatModelStreamAdvisor(None), 'model'),
    'ChatModelCallAdvisor.advise_call(None)': (lambda: ChatModelCallAdvisor(S([])).advise_call(None, None), 'request'),
    'MessageChatMemoryAdvisor(None)': (lambda: MessageChatMemoryAdvisor(None), 'chat_memory'),
    'ChatClient.builder(None)': (lambda: ChatClient.builder(None), 'model'),
    'ChatClient.create(None)': (lambda: ChatClient.create(None), 'model'),
    'default_system(None)': (lambda: ChatClient.builder(S([])).default_system(None), 'text'),
    'default_tools(None)': (lambda: ChatClient.builder(S([])).default_tools(None), 'tools'),
    'default_advisors(None)': (lambda: ChatClient.builder(S([])).default_advisors(None), 'advisors'),
    'default_options(None)': (lambda: ChatClient.builder(S([])).default_options(None), 'options'),
    'default_tool_context(None)': (lambda: ChatClient.builder(S([])).default_tool_context(None), 'context'),
    'tool_calling_advisor(None)': (lambda: ChatClient.builder(S([])).tool_calling_advisor(None), 'advisor'),
    'spec.system(None)': (lambda: ChatClient.create(S([])).prompt().system(None), 'text'),
    'spec.user(None)': (lambda: ChatClient.create(S([])).prompt().user(None), 'text'),
    'spec.messages(None)': (lambda: ChatClient.create(S([])).prompt().messages(None), 'messages'),
    'spec.tools(None)': (lambda: ChatClient.create(S([])).prompt().tools(None), 'tools'),
    'spec.options(None)': (lambda: ChatClient.create(S([])).prompt().options(None), 'options'),
    'spec.advisors(None)': (lambda: ChatClient.create(S([])).prompt().advisors(None), 'advisors'),
    'spec.tool_context(None)': (lambda: ChatClient.create(S([])).prompt().tool_context(None), 'context'),
    'spec.advisor_param(None, v)': (lambda: ChatClient.create(S([])).prompt().advisor_param(None, 1), 'key'),
}


@pytest.mark.parametrize('case', list(NONE_CASES))
def test_none_arguments_raise_an_error_naming_the_argument(case):
    action, argument = NONE_CASES[case]
    with pytest.raises((ValueError, TypeError)) as info:
        action()
    assert not isinstance(info.value, AttributeError)
    assert argument in str(info.value)


def test_a_chain_of_something_that_is_not_an_advisor_is_a_type_error():
    with pytest.raises(TypeError, match='Advisor'):
        DefaultAroundAdvisorChain([object()])


# -- rounds cut off by the output-token bound ------------------------------------------------------------


def test_calls_of_a_length_round_are_not_executed_by_default(run_loop):
    model = S([S.tool_call_response('ping', '{"n": 1', finish_reason='length'), S.text_response('never')])
    result = run_loop(client_with(model).prompt('go').tools(ping), events=True)
    generation = result.response.result
    assert generation.finish_reason == 'length'
    assert [(c.name, c.arguments) for c in generation.metadata['pendingToolCalls']] == [('ping', '{"n": 1')]
    assert 'finish reason length' in generation.output.text
    assert result.response.tool_calls == ()
    assert ran == []
    assert model.remaining == 1
    kinds = [type(e) for e in result.events]
    assert ToolExecutionStarted not in kinds
    assert ToolCallReady in kinds
    assert [e.finish_reason for e in result.events if isinstance(e, RoundFinished)] == ['length']
    finished = [e for e in result.events if isinstance(e, RunFinished)]
    assert len(finished) == 1 and finished[0].response.result.finish_reason == 'length'
    assert kinds[-1] is RunFinished


def test_execute_truncated_tool_calls_restores_springs_behaviour(run_loop):
    model = S([S.tool_call_response('ping', {'n': 4}, finish_reason='length'), S.text_response('pong 4')])
    advisor = ToolCallingAdvisor(execute_truncated_tool_calls=True)
    assert advisor.copy().execute_truncated_tool_calls is True
    result = run_loop(client_with(model, advisor).prompt('go').tools(ping))
    assert result.text == 'pong 4'
    assert ran == ['ping 4']


@pytest.mark.parametrize(
    ('format', 'native'),
    [
        ('openai-chat', 'length'),
        ('anthropic', 'max_tokens'),
        ('gemini', 'MAX_TOKENS'),
        ('openai-responses', 'incomplete'),
        ('ollama', 'length'),
    ],
)
def test_every_providers_truncation_is_normalised_to_length_even_with_tool_calls(format, native):
    assert normalized(format, native, True) == 'length'
