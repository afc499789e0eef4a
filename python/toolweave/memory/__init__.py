"""Chat memory: conversations kept between requests (Spring AI ``ChatMemory`` and its repositories).

``MessageWindowChatMemory`` keeps the last ``max_messages`` messages of each conversation in a
``ChatMemoryRepository``: :class:`InMemoryChatMemoryRepository`, :class:`SqliteChatMemoryRepository`
(standard-library ``sqlite3``) or :class:`RedisChatMemoryRepository` (redis-py, imported lazily).
Every repository stores every message type losslessly, tool calls and tool responses included, and
implements :class:`WindowedChatMemoryRepository`: each add is one atomic step of the store, so
concurrent writers of one conversation lose nothing.
The advisor that puts memory on the chain is :class:`toolweave.advisors.MessageChatMemoryAdvisor`.

The names are imported on first use (:mod:`toolweave._lazy`).
"""

from typing import TYPE_CHECKING

from toolweave._lazy import exports

if TYPE_CHECKING:
    from toolweave.memory.base import (
        CONVERSATION_ID,
        DEFAULT_CONVERSATION_ID,
        ChatMemory,
        ChatMemoryRepository,
        WindowedChatMemoryRepository,
    )
    from toolweave.memory.in_memory import InMemoryChatMemoryRepository
    from toolweave.memory.redis import RedisChatMemoryRepository
    from toolweave.memory.serialization import message_from_dict, message_to_dict
    from toolweave.memory.sqlite import SqliteChatMemoryRepository
    from toolweave.memory.window import MessageWindowChatMemory, apply_window

__all__ = [
    'CONVERSATION_ID',
    'DEFAULT_CONVERSATION_ID',
    'ChatMemory',
    'ChatMemoryRepository',
    'InMemoryChatMemoryRepository',
    'MessageWindowChatMemory',
    'RedisChatMemoryRepository',
    'SqliteChatMemoryRepository',
    'WindowedChatMemoryRepository',
    'apply_window',
    'message_from_dict',
    'message_to_dict',
]

if not TYPE_CHECKING:  # type checkers see the imports above; an unknown name stays an error for them
    __getattr__, __dir__ = exports(
        __name__,
        globals(),
        {
            'toolweave.memory.base': (
                'CONVERSATION_ID',
                'DEFAULT_CONVERSATION_ID',
                'ChatMemory',
                'ChatMemoryRepository',
                'WindowedChatMemoryRepository',
            ),
            'toolweave.memory.in_memory': ('InMemoryChatMemoryRepository',),
            'toolweave.memory.redis': ('RedisChatMemoryRepository',),
            'toolweave.memory.serialization': ('message_from_dict', 'message_to_dict'),
            'toolweave.memory.sqlite': ('SqliteChatMemoryRepository',),
            'toolweave.memory.window': ('MessageWindowChatMemory', 'apply_window'),
        },
    )
