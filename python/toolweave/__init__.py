"""toolweave: hand Python functions to a language model as tools and run the tool-calling loop.

A port of Spring AI 2.0's tool calling with a Rust core for the hot paths::

    from toolweave import ChatClient, tool
    from toolweave.providers import OpenAIChatModel

    @tool
    def get_weather(city: str) -> str:
        '''Current weather of a city.'''
        return f'Sunny in {city}'

    client = ChatClient.builder(OpenAIChatModel(model='gpt-4o-mini')).build()
    print(client.prompt('Weather in Paris?').tools(get_weather).call().content())
"""

from typing import TYPE_CHECKING

from toolweave._lazy import exports

if TYPE_CHECKING:
    from toolweave.advisors import BaseAdvisor, ToolCallingAdvisor
    from toolweave.chat import (
        AssistantMessage,
        ChatModel,
        ChatOptions,
        ChatResponse,
        Generation,
        Prompt,
        SystemMessage,
        ToolCall,
        ToolCallingChatOptions,
        ToolResponse,
        ToolResponseMessage,
        Usage,
        UserMessage,
    )
    from toolweave.client import ChatClient
    from toolweave.tools import (
        DefaultToolCallingManager,
        FunctionToolCallback,
        MethodToolCallback,
        ToolCallback,
        ToolCallLimitBehavior,
        ToolCallLimits,
        ToolContext,
        ToolDefinition,
        ToolParam,
        UnknownToolBehavior,
        tool,
    )

    __version__: str
    """The installed distribution's version (written once, in ``Cargo.toml``)."""


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version('toolweave')
    except PackageNotFoundError:  # run from a source tree that was never installed
        return '0+unknown'


__all__ = [
    'AssistantMessage',
    'BaseAdvisor',
    'ChatClient',
    'ChatModel',
    'ChatOptions',
    'ChatResponse',
    'DefaultToolCallingManager',
    'FunctionToolCallback',
    'Generation',
    'MethodToolCallback',
    'Prompt',
    'SystemMessage',
    'ToolCall',
    'ToolCallLimitBehavior',
    'ToolCallLimits',
    'ToolCallback',
    'ToolCallingAdvisor',
    'ToolCallingChatOptions',
    'ToolContext',
    'ToolDefinition',
    'ToolParam',
    'ToolResponse',
    'ToolResponseMessage',
    'UnknownToolBehavior',
    'Usage',
    'UserMessage',
    '__version__',
    'tool',
]

if not TYPE_CHECKING:  # type checkers see the imports above; an unknown name stays an error for them
    _getattr, __dir__ = exports(
        __name__,
        globals(),
        {
            'toolweave.advisors': ('BaseAdvisor', 'ToolCallingAdvisor'),
            'toolweave.chat': (
                'AssistantMessage',
                'ChatModel',
                'ChatOptions',
                'ChatResponse',
                'Generation',
                'Prompt',
                'SystemMessage',
                'ToolCall',
                'ToolCallingChatOptions',
                'ToolResponse',
                'ToolResponseMessage',
                'Usage',
                'UserMessage',
            ),
            'toolweave.client': ('ChatClient',),
            'toolweave.tools': (
                'DefaultToolCallingManager',
                'FunctionToolCallback',
                'MethodToolCallback',
                'ToolCallback',
                'ToolCallLimitBehavior',
                'ToolCallLimits',
                'ToolContext',
                'ToolDefinition',
                'ToolParam',
                'UnknownToolBehavior',
                'tool',
            ),
        },
    )

    def __getattr__(name: str) -> object:
        if name == '__version__':  # importlib.metadata is not imported until asked
            globals()[name] = version = _installed_version()
            return version
        return _getattr(name)
