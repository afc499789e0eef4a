"""Chat data types: messages, prompts, options, responses, the ``ChatModel`` protocol."""

from toolweave.chat.content import Media, UnsupportedContentError
from toolweave.chat.messages import (
    AssistantMessage,
    Message,
    MessageType,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.chat.model import ChatModel
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation, Usage

__all__ = [
    'AssistantMessage',
    'ChatModel',
    'ChatOptions',
    'ChatResponse',
    'Generation',
    'Media',
    'Message',
    'MessageType',
    'Prompt',
    'SystemMessage',
    'ToolCall',
    'ToolCallingChatOptions',
    'ToolResponse',
    'ToolResponseMessage',
    'UnsupportedContentError',
    'Usage',
    'UserMessage',
]
