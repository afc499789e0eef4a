"""Chat messages: the four roles of a tool-calling conversation.

Shapes follow Spring AI's ``Message`` hierarchy (``SystemMessage``, ``UserMessage``,
``AssistantMessage`` with ``ToolCall``s, ``ToolResponseMessage`` with ``ToolResponse``s) so that
the loop can be ported rule for rule. Messages are immutable; build new ones with
:func:`dataclasses.replace`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from toolweave.chat.content import Media

__all__ = [
    'AssistantMessage',
    'Message',
    'MessageType',
    'SystemMessage',
    'ToolCall',
    'ToolResponse',
    'ToolResponseMessage',
    'UserMessage',
]


class MessageType(str, enum.Enum):
    """The role of a message, spelled as the OpenAI wire format spells it."""

    SYSTEM = 'system'
    USER = 'user'
    ASSISTANT = 'assistant'
    TOOL = 'tool'


@dataclass(frozen=True)
class SystemMessage:
    """Instructions for the model (Spring AI ``SystemMessage``)."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def message_type(self) -> MessageType:
        """Always :attr:`MessageType.SYSTEM`."""
        return MessageType.SYSTEM


@dataclass(frozen=True)
class UserMessage:
    """A message from the user; it starts a new turn for the tool-call limits.

    Attributes:
        text: The user's text.
        metadata: Caller extras.
        media: Content parts after the text (images, PDFs, audio), as Spring AI's ``UserMessage(text, media)``.
    """

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    media: tuple[Media, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, 'media', _media_tuple(self.media))

    @property
    def message_type(self) -> MessageType:
        """Always :attr:`MessageType.USER`."""
        return MessageType.USER


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model (Spring AI ``AssistantMessage.ToolCall``).

    Attributes:
        id: The provider's call id; the matching :class:`ToolResponse` must carry it back.
        type: Always ``'function'`` for today's providers.
        name: The tool name as the model wrote it.
        arguments: The raw argument JSON text, exactly as streamed (may be empty).
    """

    id: str
    type: str
    name: str
    arguments: str


@dataclass(frozen=True)
class AssistantMessage:
    """A model reply: text, tool calls, or both (Spring AI ``AssistantMessage``).

    Attributes:
        content: The reply text; ``None`` when the model only called tools.
        tool_calls: The tool calls in the order the model made them.
        metadata: Provider extras such as ``reasoning`` text.
    """

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def message_type(self) -> MessageType:
        """Always :attr:`MessageType.ASSISTANT`."""
        return MessageType.ASSISTANT

    @property
    def text(self) -> str:
        """The content, or ``''`` when there is none."""
        return self.content or ''

    def has_tool_calls(self) -> bool:
        """Whether the model asked for at least one tool call."""
        return bool(self.tool_calls)


@dataclass(frozen=True)
class ToolResponse:
    """The result of one tool call, sent back to the model (Spring AI ``ToolResponse``).

    Attributes:
        id: The :attr:`ToolCall.id` this answers.
        name: The tool name.
        response_data: The tool's output as text (never ``None``: Spring maps ``null`` to ``''``).
        is_error: The text reports a failure: the tool raised, got invalid arguments, timed out, or
            was not executed (a tool-call limit answered it). Set by the tool-calling manager.
        error_type: The failure's exception class name (e.g. ``'ValueError'``, ``'TimeoutError'``),
            ``None`` when ``is_error`` is false.
        media: Content parts the tool returned (an image, a PDF), sent after ``response_data`` in the
            provider's native form (see :class:`~toolweave.tools.converter.DefaultToolCallResultConverter`).
    """

    id: str
    name: str
    response_data: str
    is_error: bool = False
    error_type: str | None = None
    media: tuple[Media, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, 'media', _media_tuple(self.media))


@dataclass(frozen=True)
class ToolResponseMessage:
    """All tool results of one model turn, in tool-call order (Spring AI ``ToolResponseMessage``)."""

    responses: tuple[ToolResponse, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def message_type(self) -> MessageType:
        """Always :attr:`MessageType.TOOL`."""
        return MessageType.TOOL

    @property
    def text(self) -> str:
        """The response texts joined by newlines (for logs and memory)."""
        return '\n'.join(r.response_data for r in self.responses)


def _media_tuple(media: Any) -> tuple[Media, ...]:
    """``media`` as a tuple of :class:`Media`; raises ``TypeError`` naming anything else."""
    parts = tuple(media)
    for part in parts:
        if not isinstance(part, Media):
            raise TypeError(f'media must hold Media parts, not {type(part).__name__}')
    return parts


Message = Union[SystemMessage, UserMessage, AssistantMessage, ToolResponseMessage]
"""Any chat message."""
