"""Definition and execution side: ``@tool``, ``ToolCallback``s, providers, the ``ToolCallingManager``.

The names are imported on first use (:mod:`toolweave._lazy`).
"""

from typing import TYPE_CHECKING

from toolweave._lazy import exports

if TYPE_CHECKING:
    from toolweave.exceptions import ToolCallLimitExceededError, ToolExecutionError
    from toolweave.tools.augment import (
        AgentThinking,
        AugmentedArgumentEvent,
        AugmentedToolCallback,
        AugmentedToolCallbackProvider,
    )
    from toolweave.tools.callback import ToolCallback
    from toolweave.tools.context import ToolContext
    from toolweave.tools.converter import DefaultToolCallResultConverter, ToolCallResultConverter
    from toolweave.tools.decorator import tool
    from toolweave.tools.definition import ToolDefinition, ToolMetadata
    from toolweave.tools.exception_processor import (
        DefaultToolExecutionExceptionProcessor,
        ToolExecutionExceptionProcessor,
    )
    from toolweave.tools.function import FunctionToolCallback, FunctionToolCallbackBuilder
    from toolweave.tools.limits import ToolCallLimitBehavior, ToolCallLimits
    from toolweave.tools.manager import (
        DefaultToolCallingManager,
        ToolCallingManager,
        ToolExecutionResult,
        UnknownToolBehavior,
    )
    from toolweave.tools.method import MethodToolCallback
    from toolweave.tools.param import ToolParam
    from toolweave.tools.provider import (
        DelegatingToolCallbackResolver,
        MethodToolCallbackProvider,
        StaticToolCallbackResolver,
        ToolCallbackProvider,
        ToolCallbackResolver,
        ToolCallbacks,
        check_unique_tool_names,
        duplicate_tool_names,
    )
    from toolweave.tools.schema import SchemaOption, ensure_valid_input_schema

__all__ = [
    'AgentThinking',
    'AugmentedArgumentEvent',
    'AugmentedToolCallback',
    'AugmentedToolCallbackProvider',
    'DefaultToolCallResultConverter',
    'DefaultToolCallingManager',
    'DefaultToolExecutionExceptionProcessor',
    'DelegatingToolCallbackResolver',
    'FunctionToolCallback',
    'FunctionToolCallbackBuilder',
    'MethodToolCallback',
    'MethodToolCallbackProvider',
    'SchemaOption',
    'StaticToolCallbackResolver',
    'ToolCallLimitBehavior',
    'ToolCallLimitExceededError',
    'ToolCallLimits',
    'ToolCallResultConverter',
    'ToolCallback',
    'ToolCallbackProvider',
    'ToolCallbackResolver',
    'ToolCallbacks',
    'ToolCallingManager',
    'ToolContext',
    'ToolDefinition',
    'ToolExecutionError',
    'ToolExecutionExceptionProcessor',
    'ToolExecutionResult',
    'ToolMetadata',
    'ToolParam',
    'UnknownToolBehavior',
    'check_unique_tool_names',
    'duplicate_tool_names',
    'ensure_valid_input_schema',
    'tool',
]

if not TYPE_CHECKING:  # type checkers see the imports above; an unknown name stays an error for them
    __getattr__, __dir__ = exports(
        __name__,
        globals(),
        {
            'toolweave.exceptions': ('ToolCallLimitExceededError', 'ToolExecutionError'),
            'toolweave.tools.augment': (
                'AgentThinking',
                'AugmentedArgumentEvent',
                'AugmentedToolCallback',
                'AugmentedToolCallbackProvider',
            ),
            'toolweave.tools.callback': ('ToolCallback',),
            'toolweave.tools.context': ('ToolContext',),
            'toolweave.tools.converter': ('DefaultToolCallResultConverter', 'ToolCallResultConverter'),
            'toolweave.tools.decorator': ('tool',),
            'toolweave.tools.definition': ('ToolDefinition', 'ToolMetadata'),
            'toolweave.tools.exception_processor': (
                'DefaultToolExecutionExceptionProcessor',
                'ToolExecutionExceptionProcessor',
            ),
            'toolweave.tools.function': ('FunctionToolCallback', 'FunctionToolCallbackBuilder'),
            'toolweave.tools.limits': ('ToolCallLimitBehavior', 'ToolCallLimits'),
            'toolweave.tools.manager': (
                'DefaultToolCallingManager',
                'ToolCallingManager',
                'ToolExecutionResult',
                'UnknownToolBehavior',
            ),
            'toolweave.tools.method': ('MethodToolCallback',),
            'toolweave.tools.param': ('ToolParam',),
            'toolweave.tools.provider': (
                'DelegatingToolCallbackResolver',
                'MethodToolCallbackProvider',
                'StaticToolCallbackResolver',
                'ToolCallbackProvider',
                'ToolCallbackResolver',
                'ToolCallbacks',
                'check_unique_tool_names',
                'duplicate_tool_names',
            ),
            'toolweave.tools.schema': ('SchemaOption', 'ensure_valid_input_schema'),
        },
    )
