"""``Prompt``: the messages and options of one model request (Spring AI ``Prompt``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from toolweave.chat.messages import Message, SystemMessage, UserMessage
from toolweave.chat.options import ChatOptions

__all__ = ['Prompt']


@dataclass(frozen=True)
class Prompt:
    """Messages in conversation order plus the request options.

    Attributes:
        messages: System, user, assistant and tool-response messages.
        options: ``None`` uses the model's defaults; :class:`ToolCallingChatOptions` enables the tool loop.
    """

    messages: tuple[Message, ...] = ()
    options: ChatOptions | None = None

    @classmethod
    def of(cls, messages: str | Sequence[Message], options: ChatOptions | None = None) -> Prompt:
        """Build from a user text or a message sequence."""
        if isinstance(messages, str):
            return cls((UserMessage(messages),), options)
        return cls(tuple(messages), options)

    def with_messages(self, messages: Sequence[Message]) -> Prompt:
        """The same options with other messages."""
        return replace(self, messages=tuple(messages))

    @property
    def system_message(self) -> SystemMessage | None:
        """The first system message, if any."""
        return next((m for m in self.messages if isinstance(m, SystemMessage)), None)

    @property
    def last_user_message(self) -> UserMessage | None:
        """The last user message, if any (it opens the current turn)."""
        return next((m for m in reversed(self.messages) if isinstance(m, UserMessage)), None)
