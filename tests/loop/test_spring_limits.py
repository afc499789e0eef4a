"""Spring AI 2.0.1 ``ToolCallLimits`` / ``ToolCallLimitExceededException``, restated as Python behaviour.

Each manager-level rule runs through ``execute_tool_calls`` and ``aexecute_tool_calls`` (``execute``
fixture); the loop-level ones through ``call()``, ``acall()`` and ``stream()`` (``run_loop``).
"""

import asyncio
import pickle

import pytest
from toolweave import ChatClient, ToolCallingAdvisor, tool
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
from toolweave.providers import ScriptedChatModel
from toolweave.tools import (
    DefaultToolCallingManager,
    MethodToolCallback,
    ToolCallLimitBehavior,
    ToolCallLimitExceededError,
    ToolCallLimits,
)
from toolweave.tools.limits import DEFAULT_MAX_CALLS_PER_TOOL, DEFAULT_MAX_TOTAL_TOOL_CALLS

S = ScriptedChatModel
RETURN_ERROR = ToolCallLimitBehavior.RETURN_ERROR_RESPONSE


@tool
def tool_a() -> str:
    return 'A done'


@tool
def tool_b() -> str:
    return 'B done'


def calls(*names: str) -> ChatResponse:
    tool_calls = tuple(ToolCall(f'id{i}', 'function', name, '{}') for i, name in enumerate(names))
    return ChatResponse((Generation(AssistantMessage(None, tool_calls), 'tool_calls'),))


def prior(*names: str) -> ToolResponseMessage:
    return ToolResponseMessage(tuple(ToolResponse(f'prior{i}', name, 'x') for i, name in enumerate(names)))


def prompt(*history: object) -> Prompt:
    options = ToolCallingChatOptions(tool_callbacks=(MethodToolCallback(tool_a), MethodToolCallback(tool_b)))
    return Prompt((SystemMessage('sys'), UserMessage('go'), *history), options)  # type: ignore[arg-type]


@pytest.fixture(params=['blocking', 'async'])
def execute(request):
    """Run the manager's blocking or async path."""

    def run(manager: DefaultToolCallingManager, p: Prompt, chat: ChatResponse):
        if request.param == 'blocking':
            return manager.execute_tool_calls(p, chat)
        return asyncio.run(manager.aexecute_tool_calls(p, chat))

    return run


def last_responses(history) -> list[tuple[str, str, str]]:
    return [(r.id, r.name, r.response_data) for r in history[-1].responses]


# --- ToolCallLimitExceededError ------------------------------------------------------------------


def test_per_tool_breach_carries_tool_name_limit_spring_message_and_history(execute):
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(1, tool='tool_a'))
    p, chat = prompt(), calls('tool_b', 'tool_a', 'tool_a', 'tool_b')
    with pytest.raises(ToolCallLimitExceededError) as info:
        execute(manager, p, chat)
    error = info.value
    assert (error.tool_name, error.limit) == ('tool_a', 1)
    assert str(error) == "Tool call limit (1) exceeded for tool 'tool_a'"
    breach = "Tool call limit (1) exceeded for tool 'tool_a'. No further calls to this tool are allowed in this turn."
    assert error.breach_text == breach
    # the history up to the breach: prompt, assistant message, the responses so far + the breach response
    assert error.conversation_history[:2] == p.messages
    assert error.conversation_history[2] == chat.result.output
    assert last_responses(error.conversation_history) == [
        ('id0', 'tool_b', 'B done'),
        ('id1', 'tool_a', 'A done'),
        ('id2', 'tool_a', breach),
    ]
    breach_response = error.conversation_history[-1].responses[-1]
    assert (breach_response.is_error, breach_response.error_type) == (True, 'ToolCallLimitExceededError')
    assert [(r.id, r.response_data) for r in error.partial_responses] == [('id0', 'B done'), ('id1', 'A done')]


def test_total_breach_has_no_tool_name_and_the_total_message(execute):
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_total_tool_calls(2))
    with pytest.raises(ToolCallLimitExceededError) as info:
        execute(manager, prompt(prior('tool_b')), calls('tool_a', 'tool_a'))
    error = info.value
    assert (error.tool_name, error.limit) == (None, 2)
    assert str(error) == 'Total tool call limit (2) exceeded for this turn'
    assert error.breach_text == 'Total tool call limit (2) exceeded for this turn. No further tool calls are allowed.'
    assert last_responses(error.conversation_history) == [
        ('id0', 'tool_a', 'A done'),
        ('id1', 'tool_a', error.breach_text),
    ]


def test_limit_error_builds_spring_generation_and_survives_pickle(execute):
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(1))
    with pytest.raises(ToolCallLimitExceededError) as info:
        execute(manager, prompt(), calls('tool_a', 'tool_a'))
    generation = info.value.build_generation()
    assert generation.output.content == info.value.breach_text
    assert generation.finish_reason == 'toolCallLimitExceeded' == ToolCallLimitExceededError.FINISH_REASON
    assert [r.id for r in generation.metadata['partialToolResponses']] == ['id0']
    again = pickle.loads(pickle.dumps(info.value))
    assert (str(again), again.tool_name, again.limit) == (str(info.value), 'tool_a', 1)
    assert again.conversation_history == info.value.conversation_history


def test_breach_without_history_reads_the_message():
    error = ToolCallLimitExceededError(None, 5)
    assert error.breach_text == str(error) == 'Total tool call limit (5) exceeded for this turn'
    assert error.partial_responses == () and error.conversation_history == ()


# --- what counts ---------------------------------------------------------------------------------


def test_excluded_tool_still_counts_toward_total(execute):
    limits = ToolCallLimits().max_calls_per_tool(1).exclude_tool_from_limit('tool_a').max_total_tool_calls(3)
    manager = DefaultToolCallingManager(limits=limits.with_behavior(RETURN_ERROR))
    result = execute(manager, prompt(prior('tool_a')), calls('tool_a', 'tool_a', 'tool_a'))
    total = 'Total tool call limit (3) exceeded for this turn. No further tool calls are allowed.'
    # three prior+current calls of the excluded tool fit the total; the fourth does not
    assert last_responses(result.conversation_history) == [
        ('id0', 'tool_a', 'A done'),
        ('id1', 'tool_a', 'A done'),
        ('id2', 'tool_a', total),
    ]
    with pytest.raises(ToolCallLimitExceededError) as info:
        execute(DefaultToolCallingManager(limits=limits), prompt(prior('tool_a', 'tool_a', 'tool_a')), calls('tool_a'))
    assert (info.value.tool_name, info.value.limit) == (None, 3)


def test_excluded_tool_has_no_per_tool_limit(execute):
    # Spring whenToolExcludedFromLimitThenNotCounted: three prior calls, per-tool limit 1
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(1).exclude_tool_from_limit('tool_a'))
    result = execute(manager, prompt(prior('tool_a', 'tool_a', 'tool_a')), calls('tool_a'))
    assert last_responses(result.conversation_history) == [('id0', 'tool_a', 'A done')]


def test_breached_calls_count_toward_the_total(execute):
    # as Spring: every call of the batch counts, also one a limit answered
    limits = ToolCallLimits().max_calls_per_tool(1).max_total_tool_calls(2).with_behavior(RETURN_ERROR)
    result = execute(DefaultToolCallingManager(limits=limits), prompt(), calls('tool_a', 'tool_a', 'tool_b'))
    texts = [text for _, _, text in last_responses(result.conversation_history)]
    assert texts[0] == 'A done'
    assert texts[1].startswith("Tool call limit (1) exceeded for tool 'tool_a'")
    assert texts[2].startswith('Total tool call limit (2) exceeded')


def test_defaults_are_40_per_tool_and_150_per_turn(execute):
    assert (DEFAULT_MAX_CALLS_PER_TOOL, DEFAULT_MAX_TOTAL_TOOL_CALLS) == (40, 150)
    manager = DefaultToolCallingManager()
    with pytest.raises(ToolCallLimitExceededError) as per_tool:
        execute(manager, prompt(prior(*['tool_a'] * 40)), calls('tool_a'))
    assert (per_tool.value.tool_name, per_tool.value.limit) == ('tool_a', 40)
    with pytest.raises(ToolCallLimitExceededError) as total:
        execute(manager, prompt(prior(*[f't{i}' for i in range(150)])), calls('tool_a'))
    assert (total.value.tool_name, total.value.limit) == (None, 150)


def test_unlimited_knobs_disable_the_defaults(execute):
    per_tool_off = DefaultToolCallingManager(limits=ToolCallLimits().unlimited_calls_per_tool())
    result = execute(per_tool_off, prompt(prior(*['tool_a'] * 45)), calls('tool_a'))
    assert last_responses(result.conversation_history) == [('id0', 'tool_a', 'A done')]
    both_off = DefaultToolCallingManager(
        limits=ToolCallLimits().unlimited_calls_per_tool().unlimited_total_tool_calls()
    )
    result = execute(both_off, prompt(prior(*['tool_a'] * 155)), calls('tool_a'))
    assert last_responses(result.conversation_history) == [('id0', 'tool_a', 'A done')]


def test_prior_turns_do_not_count(execute):
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(1).max_total_tool_calls(1))
    p = Prompt(
        (UserMessage('earlier'), prior(*['tool_b'] * 10), UserMessage('now')),
        ToolCallingChatOptions(tool_callbacks=(MethodToolCallback(tool_a),)),
    )
    assert last_responses(execute(manager, p, calls('tool_a')).conversation_history) == [('id0', 'tool_a', 'A done')]
    current = Prompt((*p.messages, prior('tool_a')), p.options)
    with pytest.raises(ToolCallLimitExceededError) as info:
        execute(manager, current, calls('tool_a'))
    assert info.value.tool_name == 'tool_a'


def test_builder_exclusion_and_override_undo_each_other():
    limits = ToolCallLimits().max_calls_per_tool(5, tool='x').exclude_tool_from_limit('x')
    assert limits.limit_for('x') is None and 'x' not in limits.per_tool
    limits = limits.max_calls_per_tool(2, tool='x')
    assert limits.limit_for('x') == 2 and 'x' not in limits.excluded
    for bad in ('', '  ', None):
        with pytest.raises(ValueError, match='tool must be a non-empty tool name'):
            ToolCallLimits().exclude_tool_from_limit(bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match='tool must be a non-empty tool name'):
            ToolCallLimits().max_calls_per_tool(1, tool=bad if bad is not None else '')


# --- through the loop ----------------------------------------------------------------------------


def looping_client(manager: DefaultToolCallingManager, model: ScriptedChatModel) -> ChatClient:
    return ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(manager)).build()


def test_total_breach_in_the_loop_ends_with_the_breach_generation(run_loop):
    manager = DefaultToolCallingManager(
        limits=ToolCallLimits().exclude_tool_from_limit('tool_a').max_total_tool_calls(2)
    )
    model = ScriptedChatModel(
        [S.tool_call_response('tool_a', {}, 'r1'), S.tool_call_response('tool_a', {}, 'r2', more=[('tool_a', {})])]
    )
    result = run_loop(looping_client(manager, model).prompt('go').tools(tool_a))
    generation = result.response.result
    assert generation.finish_reason == 'toolCallLimitExceeded'
    assert (
        generation.output.content
        == 'Total tool call limit (2) exceeded for this turn. No further tool calls are allowed.'
    )
    assert [(r.id, r.response_data) for r in generation.metadata['partialToolResponses']] == [('r2', 'A done')]
    assert len(model.prompts) == 2  # the breach ends the loop: the model is not asked again


def test_excluded_tool_runs_past_the_per_tool_limit_in_the_loop(run_loop):
    limits = ToolCallLimits().max_calls_per_tool(1).exclude_tool_from_limit('tool_a')
    model = ScriptedChatModel(
        [S.tool_call_response('tool_a', {}, 'r1'), S.tool_call_response('tool_a', {}, 'r2'), S.text_response('ok')]
    )
    result = run_loop(looping_client(DefaultToolCallingManager(limits=limits), model).prompt('go').tools(tool_a))
    assert result.text == 'ok'
    assert [r.response_data for r in model.prompts[2].messages[-1].responses] == ['A done']
