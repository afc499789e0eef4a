"""The tool loop on the advisor chain: blocking, async and streaming, through ChatClient."""

import asyncio

import pytest
from support.weather import get_weather
from toolweave import ChatClient, tool
from toolweave.advisors import (
    HIGHEST_PRECEDENCE,
    LOWEST_PRECEDENCE,
    BaseAdvisor,
    ChatClientRequest,
    ChatClientResponse,
    DefaultAroundAdvisorChain,
    StrictToolExecutionEligibilityChecker,
    ToolCallingAdvisor,
)
from toolweave.chat import ChatOptions, Prompt, ToolResponseMessage, Usage, UserMessage
from toolweave.providers import ScriptedChatModel
from toolweave.tools import DefaultToolCallingManager, ToolCallLimits

S = ScriptedChatModel


@tool(return_direct=True)
def open_ticket(subject: str) -> str:
    return f'TICKET-7: {subject}'


def two_round_script() -> list:
    return [
        S.tool_call_response(
            'get_weather', {'city': 'Paris'}, 'c1', usage=S.usage(100, 10, prompt_tokens_details={'cached_tokens': 40})
        ),
        S.text_response('It is 18 C in Paris.', usage=S.usage(130, 8, prompt_tokens_details={'cached_tokens': 100})),
    ]


def expected_total() -> Usage:
    return Usage(230, 18, 248, prompt_tokens_details={'cached_tokens': 140})


def stream_all(spec) -> list:
    async def run() -> list:
        return [r async for r in spec.stream().chat_responses()]

    return asyncio.run(run())


def test_loop_runs_tool_and_sums_usage(run_loop):
    model = ScriptedChatModel(two_round_script())
    client = ChatClient.builder(model).default_system('Be brief.').build()
    result = run_loop(client.prompt('Weather in Paris?').tools(get_weather))
    assert result.text == 'It is 18 C in Paris.'
    assert result.usage == expected_total()
    assert result.response.result.finish_reason == 'stop'
    assert not any(c.has_tool_calls() for c in result.chunks)  # stream: tool-call chunks stay inside the loop
    if run_loop.mode != 'stream':
        assert result.response.metadata['toolCallingRounds'] == 2
    second = model.prompts[1].messages
    assert isinstance(second[-1], ToolResponseMessage)
    assert [(r.id, r.name, r.response_data) for r in second[-1].responses] == [
        ('c1', 'get_weather', '18 C and sunny in Paris')
    ]
    assert [type(m).__name__ for m in second] == [
        'SystemMessage',
        'UserMessage',
        'AssistantMessage',
        'ToolResponseMessage',
    ]
    assert [cb.tool_definition.name for cb in model.prompts[0].options.tool_callbacks] == ['get_weather']


def test_streaming_sums_usage_on_the_one_chunk_that_carries_it():
    model = ScriptedChatModel(two_round_script())
    chunks = stream_all(ChatClient.create(model).prompt('Weather in Paris?').tools(get_weather))
    assert [c.usage for c in chunks if c.usage is not None] == [expected_total()]
    assert chunks[-1].result.finish_reason == 'stop'


def test_streaming_emits_usage_correction_when_last_round_has_none():
    model = ScriptedChatModel(
        [
            S.tool_call_response('get_weather', {'city': 'Oslo'}, usage=S.usage(50, 5)),
            S.text_response('Snowy.'),
        ]
    )
    chunks = stream_all(ChatClient.create(model).prompt('Oslo?').tools(get_weather))
    assert chunks[-1].generations == ()
    assert chunks[-1].usage == Usage(50, 5, 55)


def test_stream_content_view():
    model = ScriptedChatModel(two_round_script())

    async def run() -> list[str]:
        return [t async for t in ChatClient.create(model).prompt('q').tools(get_weather).stream().content()]

    assert ''.join(asyncio.run(run())) == 'It is 18 C in Paris.'


def test_return_direct_ends_loop_with_tool_output(run_loop):
    model = ScriptedChatModel([S.tool_call_response('open_ticket', {'subject': 'printer'}, 't1', usage=S.usage(9, 1))])
    result = run_loop(ChatClient.create(model).prompt('Printer broken').tools(open_ticket))
    chat = result.response
    assert chat.result.output.content == result.text == 'TICKET-7: printer'
    assert chat.result.finish_reason == 'returnDirect'
    assert dict(chat.result.metadata) == {'toolId': 't1', 'toolName': 'open_ticket'}
    assert chat.usage == result.usage == Usage(9, 1, 10)
    assert len(model.prompts) == 1


def test_limit_breach_becomes_final_generation(run_loop):
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(1))
    model = ScriptedChatModel(
        [
            S.tool_call_response('get_weather', {'city': 'Paris'}, 'a', more=[('get_weather', {'city': 'Oslo'})]),
        ]
    )
    client = ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(manager)).build()
    chat = run_loop(client.prompt('Both?').tools(get_weather)).response
    assert chat.result.finish_reason == 'toolCallLimitExceeded'
    assert chat.result.output.content == (
        "Tool call limit (1) exceeded for tool 'get_weather'. No further calls to this tool are allowed in this turn."
    )
    assert [(r.id, r.response_data) for r in chat.result.metadata['partialToolResponses']] == [
        ('a', '18 C and sunny in Paris')
    ]


def test_pass_through_without_tool_calling_options():
    model = ScriptedChatModel([S.tool_call_response('get_weather', {'city': 'Paris'})])
    advisor = ToolCallingAdvisor()
    from toolweave.advisors import ChatModelCallAdvisor

    chain = DefaultAroundAdvisorChain([advisor, ChatModelCallAdvisor(model)])
    response = chain.next_call(ChatClientRequest(Prompt((UserMessage('x'),), ChatOptions())))
    assert response.chat_response.has_tool_calls()
    assert len(model.prompts) == 1


def test_strict_checker_skips_truncated_tool_calls():
    model = ScriptedChatModel([S.tool_call_response('get_weather', {'city': 'Paris'}, finish_reason='length')])
    advisor = ToolCallingAdvisor(eligibility_checker=StrictToolExecutionEligibilityChecker())
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    chat = client.prompt('q').tools(get_weather).call().chat_response()
    assert chat.has_tool_calls() and len(model.prompts) == 1


class RoundCounter(ToolCallingAdvisor):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.events: list[str] = []

    def copy(self, **changes):
        return self

    def do_initialize_loop(self, request, chain):
        self.events.append('init')
        return request

    def do_before_call(self, request, chain):
        self.events.append(f'before:{len(request.prompt.messages)}')
        return request

    def do_after_call(self, response, chain):
        self.events.append('after')
        return response

    def do_finalize_loop(self, response, chain):
        self.events.append('final')
        return response

    def do_initialize_loop_stream(self, request, chain):
        self.events.append('init-s')
        return request

    def do_before_stream(self, request, chain):
        self.events.append(f'before-s:{len(request.prompt.messages)}')
        return request

    def do_finalize_loop_stream(self, response, chain):
        self.events.append('final-s')


def test_hooks_blocking_and_streaming():
    advisor = RoundCounter()
    client = ChatClient.builder(ScriptedChatModel(two_round_script() * 2)).tool_calling_advisor(advisor).build()
    client.prompt('q').tools(get_weather).call()
    assert advisor.events == ['init', 'before:1', 'after', 'before:3', 'after', 'final']
    advisor.events.clear()
    stream_all(client.prompt('q').tools(get_weather))
    assert advisor.events == ['init-s', 'before-s:1', 'before-s:3', 'final-s']


def test_history_disabled_sends_system_and_last_message(run_loop):
    model = ScriptedChatModel(two_round_script())
    advisor = ToolCallingAdvisor(conversation_history_enabled=False)
    client = ChatClient.builder(model).default_system('sys').tool_calling_advisor(advisor).build()
    run_loop(client.prompt('q').tools(get_weather))
    assert [type(m).__name__ for m in model.prompts[1].messages] == ['SystemMessage', 'ToolResponseMessage']


class Recorder(BaseAdvisor):
    def __init__(self, order: int = 0) -> None:
        super().__init__(order)
        self.seen: list[str] = []

    def before(self, request, chain):
        self.seen.append(f'in:{type(request.prompt.messages[-1]).__name__}')
        return request

    def after(self, response, chain):
        chat = response.chat_response
        self.seen.append('out:tools' if chat and chat.has_tool_calls() else 'out:text')
        return response


@pytest.mark.parametrize('mode', ['call', 'acall'])
def test_inner_advisor_runs_every_round_outer_once(mode):
    inner, outer = Recorder(0), Recorder(HIGHEST_PRECEDENCE + 100)
    spec = (
        ChatClient.create(ScriptedChatModel(two_round_script())).prompt('q').tools(get_weather).advisors(inner, outer)
    )
    if mode == 'call':
        spec.call()
    else:
        asyncio.run(spec.acall())
    assert inner.seen == ['in:UserMessage', 'out:tools', 'in:ToolResponseMessage', 'out:text']
    assert outer.seen == ['in:UserMessage', 'out:text']


def test_chain_order_is_stable_and_copy_skips_self():
    a, b, c = Recorder(5), Recorder(5), Recorder(-1)
    chain = DefaultAroundAdvisorChain([a, b, c])
    assert chain.advisors == (c, a, b)
    assert chain.copy(a).advisors == (b,)
    with pytest.raises(ValueError, match='not on this chain'):
        chain.copy(Recorder())


def test_chain_without_terminal_advisor_is_a_clear_error():
    chain = DefaultAroundAdvisorChain([Recorder()])
    with pytest.raises(LookupError, match='No CallAdvisor left on the chain'):
        chain.next_call(ChatClientRequest(Prompt((UserMessage('x'),))))


def test_tool_advisor_order_bounds_and_single_advisor_rule():
    for bad in (HIGHEST_PRECEDENCE, LOWEST_PRECEDENCE):
        with pytest.raises(ValueError, match='must be between'):
            ToolCallingAdvisor(order=bad)
    assert ToolCallingAdvisor.DEFAULT_ORDER == HIGHEST_PRECEDENCE + 300
    client = ChatClient.create(ScriptedChatModel([]))
    with pytest.raises(ValueError, match='Only one ToolCallingAdvisor'):
        client.prompt('q').advisors(ToolCallingAdvisor(), ToolCallingAdvisor()).call()


def test_disabled_tool_advisor_returns_tool_calls_to_caller():
    model = ScriptedChatModel([S.tool_call_response('get_weather', {'city': 'Paris'})])
    client = ChatClient.builder(model).disable_tool_calling_advisor().build()
    assert client.prompt('q').tools(get_weather).call().chat_response().tool_calls[0].name == 'get_weather'


def test_sync_base_advisor_in_async_path():
    from toolweave.advisors import CallAdvisor

    class SyncOnly(CallAdvisor):
        order = HIGHEST_PRECEDENCE + 10

        def advise_call(self, request, chain):
            response = chain.next_call(request)
            return ChatClientResponse(response.chat_response, {**response.context, 'wrapped': True})

    spec = ChatClient.create(ScriptedChatModel(two_round_script())).prompt('q').tools(get_weather)
    response = asyncio.run(spec.advisors(SyncOnly()).acall())
    assert response.content() == 'It is 18 C in Paris.'
    assert response.chat_client_response().context['wrapped'] is True


def test_tools_accepts_objects_lists_and_callbacks():
    class Tools:
        @tool
        def alpha(self) -> str:
            return 'a'

        @tool
        def beta(self) -> str:
            return 'b'

    from toolweave.tools import MethodToolCallback

    model = ScriptedChatModel([S.text_response('ok')])
    ChatClient.create(model).prompt('q').tools(Tools(), [MethodToolCallback(get_weather)]).call()
    assert [cb.tool_definition.name for cb in model.prompts[0].options.tool_callbacks] == [
        'alpha',
        'beta',
        'get_weather',
    ]
    with pytest.raises(ValueError, match='No @tool methods found'):
        ChatClient.create(model).prompt('q').tools(object()).call()


def test_tool_callbacks_from_accepts_functions_and_objects():
    from toolweave.tools import ToolCallbacks

    class Tools:
        @tool
        def alpha(self) -> str:
            return 'a'

    assert [cb.tool_definition.name for cb in ToolCallbacks.from_(get_weather, Tools())] == ['get_weather', 'alpha']


def test_call_response_repr_shows_content_and_usage():
    response = ChatClient.create(ScriptedChatModel(two_round_script())).prompt('q').tools(get_weather).call()
    assert repr(response) == f'CallResponse(content={response.content()!r}, usage={expected_total()!r})'


def test_tool_context_reaches_tool_not_model(run_loop):
    from toolweave.tools import ToolContext

    @tool
    def whoami(ctx: ToolContext) -> str:
        return ctx['user']

    model = ScriptedChatModel([S.tool_call_response('whoami', {}), S.text_response('done')])
    run_loop(ChatClient.create(model).prompt('q').tools(whoami).tool_context({'user': 'ada'}))
    assert model.prompts[1].messages[-1].responses[0].response_data == 'ada'
    assert model.prompts[0].options.tool_callbacks[0].tool_definition.input_schema['properties'] == {}


def test_duplicate_tool_names_are_rejected():
    @tool(name='get_weather')
    def other(city: str) -> str:
        return city

    with pytest.raises(ValueError, match="Multiple tools with the same name 'get_weather'"):
        ChatClient.create(ScriptedChatModel([])).prompt('q').tools(get_weather, other).call()


def test_garbage_usage_counts_read_as_zero():
    usage = Usage.from_openai(
        {
            'prompt_tokens': 2**63,
            'completion_tokens': -1,
            'total_tokens': 1.5,
            'prompt_tokens_details': {'cached_tokens': 2**70, 'audio_tokens': 2},
        }
    )
    assert usage == Usage(0, 0, 0, prompt_tokens_details={'audio_tokens': 2})
    assert usage.native is not None and usage.native['prompt_tokens'] == 2**63


def test_a_functions_tool_callback_is_made_once_across_requests():
    model = ScriptedChatModel([S.text_response('a'), S.text_response('b')])
    client = ChatClient.create(model)
    client.prompt('one').tools(get_weather).call()
    client.prompt('two').tools(get_weather).call()
    first, second = (p.options.tool_callbacks[0] for p in model.prompts)
    assert first is second and first.tool_definition.name == 'get_weather'
