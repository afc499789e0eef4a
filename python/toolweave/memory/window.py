"""``MessageWindowChatMemory``: the last N messages of each conversation (Spring AI ``MessageWindowChatMemory``).

Rules (Spring's, plus one): when new messages bring a system message, older system messages are
dropped; system messages are never evicted; older messages go first when the window is full. Beyond
Spring: an assistant message with tool calls and the tool responses that follow it are evicted
together, so a window never starts with tool responses whose calls are gone (providers reject that).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, ToolResponseMessage
from toolweave.memory.base import ChatMemoryRepository, check_conversation_id
from toolweave.memory.in_memory import InMemoryChatMemoryRepository

__all__ = ['MessageWindowChatMemory']

DEFAULT_MAX_MESSAGES = 20


class MessageWindowChatMemory:
    """A ``ChatMemory`` that keeps at most ``max_messages`` per conversation.

    >>> from toolweave.chat import UserMessage
    >>> memory = MessageWindowChatMemory(max_messages=2)
    >>> memory.add('c1', [UserMessage('a'), UserMessage('b'), UserMessage('c')])
    >>> [m.text for m in memory.get('c1')]
    ['b', 'c']

    Args:
        repository: Where conversations live (default: a new :class:`InMemoryChatMemoryRepository`).
        max_messages: Window size (20, as Spring's default); a tool-call group may be evicted whole,
            leaving fewer.

    Raises:
        ValueError: ``max_messages`` is not a positive int.
    """

    def __init__(
        self, repository: ChatMemoryRepository | None = None, *, max_messages: int = DEFAULT_MAX_MESSAGES
    ) -> None:
        if not isinstance(max_messages, int) or isinstance(max_messages, bool) or max_messages < 1:
            raise ValueError(f'max_messages must be a positive int, got {max_messages!r}')
        self.repository: ChatMemoryRepository = repository if repository is not None else InMemoryChatMemoryRepository()
        self.max_messages = max_messages

    def add(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Append ``messages`` and store the window."""
        check_conversation_id(conversation_id)
        stored = self.repository.find_by_conversation_id(conversation_id)
        self.repository.save_all(conversation_id, self._window(stored, list(messages)))

    def get(self, conversation_id: str) -> list[Message]:
        """The window, oldest first."""
        return self.repository.find_by_conversation_id(conversation_id)

    def clear(self, conversation_id: str) -> None:
        """Forget the conversation."""
        self.repository.delete_by_conversation_id(conversation_id)

    def _window(self, stored: list[Message], new: list[Message]) -> list[Message]:
        if any(isinstance(m, SystemMessage) for m in new):
            stored = [m for m in stored if not isinstance(m, SystemMessage)]
        messages = stored + new
        if len(messages) <= self.max_messages:
            return messages
        groups = _groups(messages)
        size = len(messages)
        keep = [True] * len(groups)
        for index, group in enumerate(groups):
            if size <= self.max_messages:
                break
            if isinstance(group[0], SystemMessage):
                continue
            keep[index] = False
            size -= len(group)
        return [m for group, kept in zip(groups, keep, strict=True) if kept for m in group]


def _groups(messages: list[Message]) -> list[list[Message]]:
    """Eviction units: an assistant tool-call message with its tool responses, else one message."""
    groups: list[list[Message]] = []
    for message in messages:
        follows_call = groups and isinstance(groups[-1][0], AssistantMessage) and groups[-1][0].tool_calls
        if isinstance(message, ToolResponseMessage) and follows_call:
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups
