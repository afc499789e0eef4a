"""``InMemoryChatMemoryRepository``: conversations in a dict (Spring AI's in-memory repository)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from toolweave.chat.messages import Message
from toolweave.memory.base import check_conversation_id
from toolweave.memory.window import apply_window

__all__ = ['InMemoryChatMemoryRepository']


class InMemoryChatMemoryRepository:
    """Keeps messages in this process only; thread-safe. Messages are immutable, so they are stored as they are."""

    def __init__(self) -> None:
        self._store: dict[str, tuple[Message, ...]] = {}
        self._lock = threading.Lock()

    def find_conversation_ids(self) -> list[str]:
        """Every stored conversation id."""
        with self._lock:
            return list(self._store)

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages, oldest first."""
        check_conversation_id(conversation_id)
        with self._lock:
            return list(self._store.get(conversation_id, ()))

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the conversation's messages."""
        check_conversation_id(conversation_id)
        with self._lock:
            self._set(conversation_id, tuple(messages))

    def add_all(self, conversation_id: str, messages: Sequence[Message], *, max_messages: int | None = None) -> None:
        """Append ``messages`` and apply the window (:func:`~toolweave.memory.window.apply_window`) under the lock."""
        check_conversation_id(conversation_id)
        with self._lock:
            stored = self._store.get(conversation_id, ())
            self._set(conversation_id, tuple(apply_window(stored, messages, max_messages)))

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Remove the conversation."""
        check_conversation_id(conversation_id)
        with self._lock:
            self._store.pop(conversation_id, None)

    def _set(self, conversation_id: str, messages: tuple[Message, ...]) -> None:
        if messages:
            self._store[conversation_id] = messages
        else:
            self._store.pop(conversation_id, None)
