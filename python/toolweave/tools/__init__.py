"""Definition and execution side: ``@tool``, ``ToolCallback``s, providers, the ``ToolCallingManager``."""

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
from toolweave.tools.exception_processor import DefaultToolExecutionExceptionProcessor, ToolExecutionExceptionProcessor
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
