"""Chat model providers: OpenAI-compatible, Anthropic, Gemini, Ollama over HTTP; the embedded local model; test models."""

from toolweave.exceptions import ChatModelError, LocalModelError
from toolweave.providers._http import RetryPolicy, Timeouts
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
