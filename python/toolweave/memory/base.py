"""The ``ChatMemory`` and ``ChatMemoryRepository`` protocols (Spring AI ``ChatMemory``, ``ChatMemoryRepository``).

Beyond Spring: :class:`WindowedChatMemoryRepository` adds ``add_all``, an append that applies the
message window in the same atomic step, so concurrent writers of one conversation lose nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolweave.chat.messages import Message

__all__ = [
    'CONVERSATION_ID',
    'DEFAULT_CONVERSATION_ID',
    'ChatMemory',
    'ChatMemoryRepository',
    'WindowedChatMemoryRepository',
]

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


@runtime_checkable
class WindowedChatMemoryRepository(ChatMemoryRepository, Protocol):
    """A repository that appends atomically: what :class:`~toolweave.memory.MessageWindowChatMemory` uses when present.

    Every built-in repository implements it. A repository that implements only
    :class:`ChatMemoryRepository` still works with the window memory, through a read-then-``save_all``
    fallback that is atomic only between threads of one process.
    """

    def add_all(self, conversation_id: str, messages: Sequence[Message], *, max_messages: int | None = None) -> None:
        """Append ``messages`` and apply the window, as one atomic step of the store.

        The window rules are those of :func:`toolweave.memory.window.apply_window` (``None``: no
        window). Concurrent calls on one conversation, from any thread or process, must all be kept:
        the result equals some serial order of the calls.
        """
        ...


def check_conversation_id(conversation_id: object) -> str:
    """``conversation_id`` when it is a non-empty ``str`` that UTF-8 can encode.

    Raises:
        ValueError: empty or blank, or holds a lone surrogate. TypeError: not a ``str``.
    """
    if not isinstance(conversation_id, str):
        raise TypeError(f'conversation_id must be a str, not {type(conversation_id).__name__}')
    if not conversation_id.strip():
        raise ValueError('conversation_id cannot be null or empty')
    try:
        conversation_id.encode('utf-8')
    except UnicodeEncodeError:
        raise ValueError(
            f'conversation_id must be valid Unicode text (no lone surrogates): {conversation_id!r}'
        ) from None
    return conversation_id
