"""``RedisChatMemoryRepository``: conversations in Redis, for services with several workers (redis-py).

Each conversation is a Redis list of JSON messages under ``<key_prefix><conversation_id>``;
``save_all`` replaces it in one ``MULTI``/``EXEC`` transaction, so readers never see half a
conversation. redis-py is imported only when a repository is built without a client
(``pip install redis``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolweave.chat.messages import Message
from toolweave.memory.base import check_conversation_id
from toolweave.memory.serialization import dumps, loads

__all__ = ['RedisChatMemoryRepository']


class RedisChatMemoryRepository:
    """Conversations in Redis.

    Args:
        client: A ``redis.Redis`` client (sync); built from ``url`` when ``None``.
        url: Used when ``client`` is ``None`` (``redis://host:port/db``).
        key_prefix: Prefix of every key this repository owns.
        ttl: Seconds after the last save before Redis drops a conversation (``None``: keep).

    Raises:
        ImportError: no ``client`` was given and redis-py is not installed.
        ValueError: ``ttl`` is not a positive int.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str = 'redis://127.0.0.1:6379/0',
        key_prefix: str = 'toolweave:chat_memory:',
        ttl: int | None = None,
    ) -> None:
        if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 1):
            raise ValueError(f'ttl must be a positive int of seconds or None, got {ttl!r}')
        if client is None:
            try:
                import redis
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ImportError('RedisChatMemoryRepository needs redis-py: pip install redis') from exc
            client = redis.Redis.from_url(url)
        self._client = client
        self._prefix = key_prefix
        self._ttl = ttl

    def _key(self, conversation_id: str) -> str:
        return self._prefix + check_conversation_id(conversation_id)

    def find_conversation_ids(self) -> list[str]:
        """Every stored conversation id, sorted."""
        ids = []
        for key in self._client.scan_iter(match=_escape(self._prefix) + '*', count=500):
            text = key.decode() if isinstance(key, bytes) else str(key)
            ids.append(text[len(self._prefix) :])
        return sorted(ids)

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages, oldest first.

        Raises:
            ValueError: a stored entry is not a message.
        """
        return [loads(item) for item in self._client.lrange(self._key(conversation_id), 0, -1)]

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the conversation's messages in one transaction.

        Raises:
            TypeError: a message's metadata holds a value JSON cannot represent (nothing is changed).
        """
        key = self._key(conversation_id)
        items = [dumps(message) for message in messages]
        pipeline = self._client.pipeline(transaction=True)
        pipeline.delete(key)
        if items:
            pipeline.rpush(key, *items)
            if self._ttl is not None:
                pipeline.expire(key, self._ttl)
        pipeline.execute()

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Remove the conversation."""
        self._client.delete(self._key(conversation_id))


def _escape(prefix: str) -> str:
    """``prefix`` with Redis glob characters escaped."""
    return ''.join('\\' + c if c in '*?[]\\' else c for c in prefix)
