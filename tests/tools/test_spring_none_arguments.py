"""``None`` given to a public constructor or method of ``toolweave.tools`` (manager, tools, augmentation)
raises ``TypeError``/``ValueError`` naming the argument (Spring's ``Assert.notNull``), never ``AttributeError``."""

import asyncio

import pytest
from toolweave.chat import ChatResponse, Prompt, UserMessage
from toolweave.tools import (
    AugmentedToolCallback,
    AugmentedToolCallbackProvider,
    DefaultToolCallingManager,
    DefaultToolExecutionExceptionProcessor,
    DelegatingToolCallbackResolver,
    FunctionToolCallback,
    MethodToolCallback,
    MethodToolCallbackProvider,
    StaticToolCallbackResolver,
    ToolCallbacks,
    ToolCallLimits,
    ToolDefinition,
    check_unique_tool_names,
    ensure_valid_input_schema,
    tool,
)


def add(a: int, b: int) -> int:
    return a + b


PROMPT = Prompt((UserMessage('hi'),))

CASES = {
    # manager
    'manager.execute_tool_calls(prompt=None)': (
        'prompt',
        lambda: DefaultToolCallingManager().execute_tool_calls(None, ChatResponse(())),
    ),
    'manager.execute_tool_calls(chat_response=None)': (
        'chat_response',
        lambda: DefaultToolCallingManager().execute_tool_calls(PROMPT, None),
    ),
    'manager.aexecute_tool_calls(prompt=None)': (
        'prompt',
        lambda: asyncio.run(DefaultToolCallingManager().aexecute_tool_calls(None, ChatResponse(()))),
    ),
    'manager.aexecute_tool_calls(chat_response=None)': (
        'chat_response',
        lambda: asyncio.run(DefaultToolCallingManager().aexecute_tool_calls(PROMPT, None)),
    ),
    'manager.find(name=None)': ('name', lambda: DefaultToolCallingManager().find(None, None)),
    'manager(limits=...)': ('limits', lambda: DefaultToolCallingManager(limits=3)),
    'manager(exception_processor=...)': (
        'exception_processor',
        lambda: DefaultToolCallingManager(exception_processor='x'),
    ),
    'manager(tool_callback_resolver=...)': (
        'tool_callback_resolver',
        lambda: DefaultToolCallingManager(tool_callback_resolver=1),
    ),
    'manager(unknown_tool_behavior=None)': (
        'unknown_tool_behavior',
        lambda: DefaultToolCallingManager(unknown_tool_behavior=None),
    ),
    'processor(rethrow=None)': ('rethrow', lambda: DefaultToolExecutionExceptionProcessor(rethrow=None)),
    'processor(rethrow=[None])': ('rethrow', lambda: DefaultToolExecutionExceptionProcessor(rethrow=[None])),
    'processor.process(None)': ('error', lambda: DefaultToolExecutionExceptionProcessor().process(None)),
    'limits.with_behavior(None)': ('behavior', lambda: ToolCallLimits().with_behavior(None)),
    'limits.exclude_tool_from_limit(None)': ('tool', lambda: ToolCallLimits().exclude_tool_from_limit(None)),
    'limits.max_calls_per_tool(None)': ('n (a tool-call limit)', lambda: ToolCallLimits().max_calls_per_tool(None)),
    'limits.max_total_tool_calls(None)': ('n (a tool-call limit)', lambda: ToolCallLimits().max_total_tool_calls(None)),
    # tools
    'MethodToolCallback(None)': ('func', lambda: MethodToolCallback(None)),
    'tool(name=...)': ('name', lambda: tool(name=3)),
    'FunctionToolCallback.builder(None, fn)': ('name', lambda: FunctionToolCallback.builder(None, add)),
    # FunctionToolCallback.builder(name, None) is a deferred tool since issue 15 (tests/approvals)
    'builder.description(None)': ('description', lambda: FunctionToolCallback.builder('n', add).description(None)),
    'builder.input_type(None)': ('input_type', lambda: FunctionToolCallback.builder('n', add).input_type(None)),
    'builder.input_schema(None)': ('input_schema', lambda: FunctionToolCallback.builder('n', add).input_schema(None)),
    'builder.result_converter(None)': (
        'converter',
        lambda: FunctionToolCallback.builder('n', add).result_converter(None),
    ),
    'callback.call(None)': ('tool_input', lambda: MethodToolCallback(add).call(None)),
    'callback.acall(None)': ('tool_input', lambda: asyncio.run(MethodToolCallback(add).acall(None))),
    'ToolDefinition(name=None)': ('name', lambda: ToolDefinition(None, 'd')),
    'ToolDefinition(description=None)': ('description', lambda: ToolDefinition('n', None)),
    'ToolDefinition(input_schema=None)': ('input_schema', lambda: ToolDefinition('n', 'd', None)),
    'ensure_valid_input_schema(None)': ('input_schema', lambda: ensure_valid_input_schema(None)),
    'MethodToolCallbackProvider(None)': ('objects', lambda: MethodToolCallbackProvider(None)),
    'MethodToolCallbackProvider([None])': ('objects', lambda: MethodToolCallbackProvider([None])),
    'ToolCallbacks.from_(None)': ('tools', lambda: ToolCallbacks.from_(None)),
    'StaticToolCallbackResolver(None)': ('callbacks', lambda: StaticToolCallbackResolver(None)),
    'StaticToolCallbackResolver([None])': ('callbacks', lambda: StaticToolCallbackResolver([None])),
    'DelegatingToolCallbackResolver(None)': ('resolvers', lambda: DelegatingToolCallbackResolver(None)),
    'DelegatingToolCallbackResolver([None])': ('resolvers', lambda: DelegatingToolCallbackResolver([None])),
    'check_unique_tool_names(None)': ('callbacks', lambda: check_unique_tool_names(None)),
    # augmentation
    'AugmentedToolCallback(delegate=None)': ('delegate', lambda: AugmentedToolCallback(None)),
    'AugmentedToolCallback(argument_type=None)': (
        'argument_type',
        lambda: AugmentedToolCallback(MethodToolCallback(add), argument_type=None),
    ),
    'AugmentedToolCallbackProvider(None)': ('tools', lambda: AugmentedToolCallbackProvider(None)),
    'AugmentedToolCallbackProvider([None])': ('tools', lambda: AugmentedToolCallbackProvider([None])),
    'AugmentedToolCallbackProvider(argument_type=None)': (
        'argument_type',
        lambda: AugmentedToolCallbackProvider([add], argument_type=None),
    ),
}


@pytest.mark.parametrize('case', list(CASES))
def test_none_argument_raises_type_or_value_error_naming_it(case):
    argument, make = CASES[case]
    with pytest.raises((TypeError, ValueError)) as info:
        make()
    assert not isinstance(info.value, AttributeError)
    assert argument in str(info.value), str(info.value)
