"""The ``ChatMemory`` and ``ChatMemoryRepository`` protocols (Spring AI ``ChatMemory``, ``ChatMemoryRepository``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolweave.chat.messages import Message

__all__ = ['CONVERSATION_ID', 'DEFAULT_CONVERSATION_ID', 'ChatMemory', 'ChatMemoryRepository']

CONVERSATION_ID = 'chat_memory_conversation_id'
"""The advisor parameter naming the conversation (Spring ``ChatMemory.CONVERSATION_ID``)."""
DEFAULT_CONVERSATION_ID = 'default'
"""The conversation used when a request names none (Spring ``ChatMemory.DEFAULT_CONVERSATION_ID``)."""


@runtime_checkable
class ChatMemory(Protocol):
    """What an advisor needs from a memory: add, get, clear per conversation id."""

    def add(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Append ``messages`` to the conversation (the memory may evict older ones)."""
        ...

    def get(self, conversation_id: str) -> list[Message]:
        """The remembered messages of the conversation, oldest first (empty when unknown)."""
        ...

    def clear(self, conversation_id: str) -> None:
        """Forget the conversation."""
        ...


@runtime_checkable
class ChatMemoryRepository(Protocol):
    """Storage of whole conversations; ``save_all`` replaces what was stored."""

    def find_conversation_ids(self) -> list[str]:
        """Every stored conversation id."""
        ...

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages, oldest first (empty when unknown)."""
        ...

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the conversation's messages with ``messages``."""
        ...

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Remove the conversation (no error when unknown)."""
        ...


def check_conversation_id(conversation_id: object) -> str:
    """``conversation_id`` when it is a non-empty ``str``.

    Raises:
        ValueError: empty or blank. TypeError: not a ``str``.
    """
    if not isinstance(conversation_id, str):
        raise TypeError(f'conversation_id must be a str, not {type(conversation_id).__name__}')
    if not conversation_id.strip():
        raise ValueError('conversation_id cannot be null or empty')
    return conversation_id
