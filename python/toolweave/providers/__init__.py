"""Chat model providers: OpenAI-compatible, Anthropic, Gemini, Ollama over HTTP; the embedded local model; test models.

The names are imported on first use (:mod:`toolweave._lazy`).
"""

from typing import TYPE_CHECKING

from toolweave._lazy import exports

if TYPE_CHECKING:
    from toolweave.exceptions import ChatModelError, LocalModelError
    from toolweave.providers._http import HttpSettings, RetryPolicy, Timeouts
    from toolweave.providers._local_prompting import ToolExample
    from toolweave.providers.anthropic import AnthropicChatModel
    from toolweave.providers.gemini import GeminiChatModel
    from toolweave.providers.local import LocalChatModel
    from toolweave.providers.ollama import OllamaChatModel
    from toolweave.providers.openai import OpenAIChatModel
    from toolweave.providers.openai_responses import OpenAIResponsesModel
    from toolweave.providers.replay import ReplayChatModel, ReplayServer, Reply
    from toolweave.providers.scripted import ScriptedChatModel, ScriptExhaustedError

__all__ = [
    'AnthropicChatModel',
    'ChatModelError',
    'GeminiChatModel',
    'HttpSettings',
    'LocalChatModel',
    'LocalModelError',
    'OllamaChatModel',
    'OpenAIChatModel',
    'OpenAIResponsesModel',
    'ReplayChatModel',
    'ReplayServer',
    'Reply',
    'RetryPolicy',
    'ScriptExhaustedError',
    'ScriptedChatModel',
    'Timeouts',
    'ToolExample',
]

if not TYPE_CHECKING:  # type checkers see the imports above; an unknown name stays an error for them
    __getattr__, __dir__ = exports(
        __name__,
        globals(),
        {
            'toolweave.exceptions': ('ChatModelError', 'LocalModelError'),
            'toolweave.providers._http': ('HttpSettings', 'RetryPolicy', 'Timeouts'),
            'toolweave.providers._local_prompting': ('ToolExample',),
            'toolweave.providers.anthropic': ('AnthropicChatModel',),
            'toolweave.providers.gemini': ('GeminiChatModel',),
            'toolweave.providers.local': ('LocalChatModel',),
            'toolweave.providers.ollama': ('OllamaChatModel',),
            'toolweave.providers.openai': ('OpenAIChatModel',),
            'toolweave.providers.openai_responses': ('OpenAIResponsesModel',),
            'toolweave.providers.replay': ('ReplayChatModel', 'ReplayServer', 'Reply'),
            'toolweave.providers.scripted': ('ScriptedChatModel', 'ScriptExhaustedError'),
        },
    )
