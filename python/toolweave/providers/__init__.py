"""Chat model providers: OpenAI-compatible HTTP, the embedded local model, and a scripted model for tests."""

from toolweave.exceptions import ChatModelError, LocalModelError
from toolweave.providers._http import RetryPolicy, Timeouts
from toolweave.providers._local_prompting import ToolExample
from toolweave.providers.local import LocalChatModel
from toolweave.providers.openai import OpenAIChatModel
from toolweave.providers.scripted import ScriptedChatModel, ScriptExhaustedError

__all__ = [
    'ChatModelError',
    'LocalChatModel',
    'LocalModelError',
    'OpenAIChatModel',
    'RetryPolicy',
    'ScriptExhaustedError',
    'ScriptedChatModel',
    'Timeouts',
    'ToolExample',
]
