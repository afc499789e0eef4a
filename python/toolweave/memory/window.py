"""``MessageWindowChatMemory``: the last N messages of each conversation (Spring AI ``MessageWindowChatMemory``).

Rules (Spring's, plus one): when new messages bring a system message, older system messages are
dropped; system messages are never evicted; older messages go first when the window is full. Beyond
Spring: an assistant message with tool calls and the tool responses that follow it (system messages
in between do not count) are evicted together, so a window never starts with tool responses whose
calls are gone (providers reject that).

The rules are defined here once, as :func:`apply_window` over the building blocks
:func:`message_kind`, :func:`assign_groups` and :func:`last_evicted_group`; the SQLite repository
applies them with the same functions over per-row columns, and the Redis repository's Lua script
mirrors them (``tests/reliability/test_memory_window_equivalence.py`` checks every repository
against :func:`apply_window`).

Loading repairs: an assistant message whose tool calls lack responses (older data, another writer)
comes back followed by one "not executed" response per unanswered call, with a logged warning.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from typing import Literal

from toolweave.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.memory.base import ChatMemoryRepository, WindowedChatMemoryRepository, check_conversation_id

__all__ = [
    'NOT_EXECUTED_METADATA',
    'MessageWindowChatMemory',
    'apply_window',
    'assign_groups',
    'last_evicted_group',
    'message_kind',
    'not_executed_text',
    'repair_tool_calls',
]

DEFAULT_MAX_MESSAGES = 20
NOT_EXECUTED_METADATA = 'notExecuted'
NOT_EXECUTED_ERROR_TYPE = 'NotExecuted'
"""``ToolResponse.error_type`` of a response the window's repair inserted (``is_error`` is true)."""
_WARNED_MAX = 4096
"""Metadata key (value ``True``) of a tool-response message that answers calls that were never executed."""

Kind = Literal['s', 'c', 't', 'o']
"""Window kind of a message: system, assistant with tool calls, tool responses, other."""

_logger = logging.getLogger('toolweave.memory')
_FALLBACK_LOCKS = tuple(threading.Lock() for _ in range(64))


def message_kind(message: Message) -> Kind:
    """``'s'`` system, ``'c'`` assistant with tool calls, ``'t'`` tool responses, ``'o'`` anything else."""
    if isinstance(message, SystemMessage):
        return 's'
    if isinstance(message, AssistantMessage) and message.tool_calls:
        return 'c'
    if isinstance(message, ToolResponseMessage):
        return 't'
    return 'o'


def assign_groups(
    kinds: Iterable[Kind], positions: Iterable[int], open_group: int | None = None
) -> tuple[list[int | None], int | None]:
    """Eviction groups of messages appended after a stored conversation.

    A system message has no group (``None``: never evicted). A tool-response message joins the
    latest non-system group when that group starts with an assistant tool-call message; every other
    message starts a group, identified by its own position.

    Args:
        kinds: :func:`message_kind` of each new message.
        positions: Their positions (increasing).
        open_group: The group of the last stored non-system message when it is a tool-call group, else ``None``.

    Returns:
        The group of each new message, and ``open_group`` after them.
    """
    groups: list[int | None] = []
    for kind, position in zip(kinds, positions, strict=True):
        if kind == 's':
            groups.append(None)
            continue
        if kind == 't' and open_group is not None:
            groups.append(open_group)
            continue
        groups.append(position)
        open_group = position if kind == 'c' else None
    return groups, open_group


def last_evicted_group(group_sizes: Iterable[tuple[int, int]], excess: int) -> int | None:
    """The newest group to evict: groups go oldest first until ``excess`` messages are gone (or none are left).

    Args:
        group_sizes: ``(group, message count)`` of every non-system group, oldest first (may be lazy:
            it is read only as far as needed).
        excess: Messages over the window (``<= 0``: nothing to evict).
    """
    cut = None
    for group, size in group_sizes:
        if excess <= 0:
            break
        cut = group
        excess -= size
    return cut


def apply_window(stored: Sequence[Message], new: Sequence[Message], max_messages: int | None) -> list[Message]:
    """The conversation after appending ``new`` to ``stored`` under a window of ``max_messages`` (``None``: no window).

    >>> from toolweave.chat import UserMessage
    >>> [m.text for m in apply_window([UserMessage('a')], [UserMessage('b'), UserMessage('c')], 2)]
    ['b', 'c']
    """
    if any(isinstance(m, SystemMessage) for m in new):
        stored = [m for m in stored if not isinstance(m, SystemMessage)]
    messages = [*stored, *new]
    if max_messages is None or len(messages) <= max_messages:
        return messages
    groups, _ = assign_groups((message_kind(m) for m in messages), range(len(messages)))
    sizes: dict[int, int] = {}
    for group in groups:
        if group is not None:
            sizes[group] = sizes.get(group, 0) + 1
    cut = last_evicted_group(sizes.items(), len(messages) - max_messages)
    return [m for m, g in zip(messages, groups, strict=True) if g is None or cut is None or g > cut]


def not_executed_text(name: str, reason: str) -> str:
    """The response text stored for a tool call that never ran."""
    return f'Tool call {name!r} was not executed: {reason}.'


def repair_tool_calls(messages: Sequence[Message], reason: str) -> tuple[list[Message], int]:
    """``messages`` with every unanswered tool call answered.

    An assistant message's calls are answered by the tool-response messages that follow it (system
    messages in between are skipped). For each call without a response, a tool-response message
    inserted after those answers says the call was not executed and ``reason``; it carries metadata
    ``{'notExecuted': True}`` and each of its responses is an error (``is_error``, ``error_type``
    :data:`NOT_EXECUTED_ERROR_TYPE`), as the manager's answers for calls that did not run.

    Returns:
        The repaired messages (``messages`` copied when nothing was missing) and the number of calls answered.
    """
    repaired: list[Message] = []
    missing_total = 0
    index = 0
    while index < len(messages):
        message = messages[index]
        repaired.append(message)
        index += 1
        if not (isinstance(message, AssistantMessage) and message.tool_calls):
            continue
        answered: set[str] = set()
        while index < len(messages) and isinstance(messages[index], (ToolResponseMessage, SystemMessage)):
            follower = messages[index]
            if isinstance(follower, ToolResponseMessage):
                answered.update(r.id for r in follower.responses)
            repaired.append(follower)
            index += 1
        missing = [c for c in message.tool_calls if c.id not in answered]
        if missing:
            missing_total += len(missing)
            responses = tuple(
                ToolResponse(c.id, c.name, not_executed_text(c.name, reason), True, NOT_EXECUTED_ERROR_TYPE)
                for c in missing
            )
            repaired.append(ToolResponseMessage(responses, {NOT_EXECUTED_METADATA: True}))
    return repaired, missing_total


class MessageWindowChatMemory:
    """A ``ChatMemory`` that keeps at most ``max_messages`` per conversation.

    >>> from toolweave.chat import UserMessage
    >>> memory = MessageWindowChatMemory(max_messages=2)
    >>> memory.add('c1', [UserMessage('a'), UserMessage('b'), UserMessage('c')])
    >>> [m.text for m in memory.get('c1')]
    ['b', 'c']

    Each :meth:`add` is one atomic step of the repository
    (:meth:`~toolweave.memory.base.WindowedChatMemoryRepository.add_all`): concurrent adds to one
    conversation, from threads or processes, all keep their messages. A repository with only the
    Spring methods is read and rewritten under a lock of this process instead (not safe across processes).

    Args:
        repository: Where conversations live (default: a new
            :class:`~toolweave.memory.InMemoryChatMemoryRepository`).
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
        if repository is None:
            # imported here: in_memory imports this module
            from toolweave.memory.in_memory import InMemoryChatMemoryRepository

            repository = InMemoryChatMemoryRepository()
        self.repository: ChatMemoryRepository = repository
        self.max_messages = max_messages
        self._warned: set[str] = set()  # conversations whose repair was logged (once each)

    def add(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Append ``messages`` and apply the window, atomically.

        Raises:
            TypeError: ``messages`` is not a sequence of messages (a single message or a ``str`` included),
                or a message's metadata holds a value JSON cannot represent (nothing is changed).
        """
        check_conversation_id(conversation_id)
        messages = _check_messages(messages)
        repository = self.repository
        if isinstance(repository, WindowedChatMemoryRepository):
            repository.add_all(conversation_id, messages, max_messages=self.max_messages)
            return
        lock = _FALLBACK_LOCKS[hash((id(repository), conversation_id)) % len(_FALLBACK_LOCKS)]
        with lock:
            stored = repository.find_by_conversation_id(conversation_id)
            repository.save_all(conversation_id, apply_window(stored, messages, self.max_messages))

    def get(self, conversation_id: str) -> list[Message]:
        """The window, oldest first; unanswered tool calls come back answered "not executed".

        A warning is logged the first time this memory repairs a conversation (not at every load).
        """
        messages, missing = repair_tool_calls(
            self.repository.find_by_conversation_id(conversation_id), 'no response was stored for this call'
        )
        if missing and conversation_id not in self._warned:
            if len(self._warned) >= _WARNED_MAX:
                self._warned.clear()
            self._warned.add(conversation_id)
            _logger.warning(
                'conversation %r was stored with %d tool call(s) lacking a response; '
                'answered them as not executed (the stored conversation is unchanged)',
                conversation_id,
                missing,
            )
        return messages

    def clear(self, conversation_id: str) -> None:
        """Forget the conversation."""
        self.repository.delete_by_conversation_id(conversation_id)


_MESSAGE_CLASSES = (SystemMessage, UserMessage, AssistantMessage, ToolResponseMessage)


def _check_messages(messages: object) -> list[Message]:
    """``messages`` as a list when it is a sequence of messages (not a ``str`` nor one message).

    Raises:
        TypeError: anything else, naming the first item that is not a message.
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise TypeError(f'messages must be a sequence of messages (e.g. [UserMessage(...)]), got {messages!r:.80}')
    for index, message in enumerate(messages):
        if not isinstance(message, _MESSAGE_CLASSES):
            raise TypeError(f'messages[{index}] is not a message: {message!r:.80}')
    return list(messages)
