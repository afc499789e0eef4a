"""``RedisChatMemoryRepository``: conversations in Redis, for services with several workers (redis-py).

Each conversation is a Redis list of JSON messages under ``<key_prefix><conversation_id>``.
``save_all`` replaces it in one ``MULTI``/``EXEC`` transaction; ``add_all`` appends and applies the
message window in one Lua script, so concurrent writers from any process all keep their messages
and readers never see half a conversation. The script mirrors the rules of
:func:`toolweave.memory.window.apply_window`: it reads only the messages it may evict (from the head)
and, when a system message arrives, scans for the old ones; an ordinary add does not read the
conversation. redis-py is imported only when a repository is built without a client
(``pip install redis``).

Keys under the prefix that are not UTF-8 (written by something else) are skipped by
``find_conversation_ids``, with a warning. Errors of the server or the connection are redis-py's
typed exceptions (``redis.ConnectionError``, ``redis.TimeoutError``, ``redis.ResponseError``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from toolweave.chat.messages import Message, SystemMessage
from toolweave.memory.base import check_conversation_id
from toolweave.memory.serialization import dumps, loads

__all__ = ['RedisChatMemoryRepository']

_logger = logging.getLogger('toolweave.memory')

# KEYS[1]: the conversation list. ARGV[1]: window size (0: none); ARGV[2]: TTL seconds (0: none);
# ARGV[3]: '1' when the new messages hold a system message; ARGV[4..]: the new messages' JSON.
# Rules of toolweave.memory.window: a new system message drops the old ones; systems are never
# evicted; a tool-response message joins the latest non-system group when that group starts with an
# assistant tool-call message; whole groups are evicted, oldest first, until the window holds.
_ADD_ALL = r"""
local key = KEYS[1]
local window = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local CHUNK = 128

local function decoded(item)
  local ok, data = pcall(cjson.decode, item)
  if ok and type(data) == 'table' then return data end
  return {}
end

local function is_system(item)
  if string.sub(item, 1, 17) == '{"type":"system",' then return true end
  if string.sub(item, 1, 9) == '{"type":"' then return false end
  return decoded(item)['type'] == 'system'
end

local function kind(item)
  if string.sub(item, 1, 17) == '{"type":"system",' then return 's' end
  if string.sub(item, 1, 15) == '{"type":"tool",' then return 't' end
  if string.sub(item, 1, 15) == '{"type":"user",' then return 'o' end
  local data = decoded(item)
  if data['type'] == 'system' then return 's' end
  if data['type'] == 'tool' then return 't' end
  if data['type'] == 'assistant' and type(data['tool_calls']) == 'table' and #data['tool_calls'] > 0 then
    return 'c'
  end
  return 'o'
end

if ARGV[3] == '1' then
  local old = {}
  local length = redis.call('LLEN', key)
  for start = 0, length - 1, CHUNK do
    for _, item in ipairs(redis.call('LRANGE', key, start, start + CHUNK - 1)) do
      if is_system(item) then old[#old + 1] = item end
    end
  end
  for _, item in ipairs(old) do redis.call('LREM', key, 0, item) end
end

for first = 4, #ARGV, CHUNK do
  redis.call('RPUSH', key, unpack(ARGV, first, math.min(first + CHUNK - 1, #ARGV)))
end

local size = redis.call('LLEN', key)
if window > 0 and size > window then
  local kept = {}
  local stop = nil
  local index = 0
  local call_group = false
  while stop == nil do
    local chunk = redis.call('LRANGE', key, index, index + CHUNK - 1)
    if #chunk == 0 then stop = index break end
    for offset, item in ipairs(chunk) do
      local k = kind(item)
      if k == 's' then
        kept[#kept + 1] = item
      elseif k == 't' and call_group then
        size = size - 1
      elseif size <= window then
        stop = index + offset - 1
        break
      else
        call_group = (k == 'c')
        size = size - 1
      end
    end
    index = index + #chunk
  end
  redis.call('LTRIM', key, stop, -1)
  for i = #kept, 1, -1 do redis.call('LPUSH', key, kept[i]) end
end

if ttl > 0 and redis.call('EXISTS', key) == 1 then redis.call('EXPIRE', key, ttl) end
return redis.call('LLEN', key)
"""


class RedisChatMemoryRepository:
    """Conversations in Redis.

    Args:
        client: A ``redis.Redis`` client (sync, without ``decode_responses``); built from ``url`` when ``None``.
        url: Used when ``client`` is ``None`` (``redis://host:port/db``).
        key_prefix: Prefix of every key this repository owns.
        ttl: Seconds after the last save before Redis drops a conversation (``None``: keep).
        socket_timeout: Seconds a command or a connection attempt may take before
            ``redis.TimeoutError`` (only when the client is built from ``url``).

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
        socket_timeout: float = 10.0,
    ) -> None:
        if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 1):
            raise ValueError(f'ttl must be a positive int of seconds or None, got {ttl!r}')
        if client is None:
            try:
                import redis
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ImportError('RedisChatMemoryRepository needs redis-py: pip install redis') from exc
            client = redis.Redis.from_url(url, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout)
        self._client = client
        self._prefix = key_prefix
        self._ttl = ttl
        self._add_all = client.register_script(_ADD_ALL)

    def _key(self, conversation_id: str) -> str:
        return self._prefix + check_conversation_id(conversation_id)

    def find_conversation_ids(self) -> list[str]:
        """Every stored conversation id, sorted (keys under the prefix that are not UTF-8 are skipped, with a warning)."""
        prefix = self._prefix.encode()
        ids = []
        skipped = 0
        for key in self._client.scan_iter(match=_escape(self._prefix) + '*', count=500):
            raw = key if isinstance(key, bytes) else str(key).encode('utf-8', 'surrogateescape')
            try:
                ids.append(raw[len(prefix) :].decode())
            except UnicodeDecodeError:
                skipped += 1
        if skipped:
            _logger.warning('skipped %d key(s) under prefix %r that are not UTF-8', skipped, self._prefix)
        return sorted(conversation_id for conversation_id in ids if conversation_id.strip())

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

    def add_all(self, conversation_id: str, messages: Sequence[Message], *, max_messages: int | None = None) -> None:
        """Append ``messages`` and apply the window in one Lua script (atomic on the server).

        Raises:
            TypeError: a message's metadata holds a value JSON cannot represent (nothing is changed).
            redis.ResponseError: the key holds something other than a list.
        """
        key = self._key(conversation_id)
        items = [dumps(message) for message in messages]
        system = any(isinstance(m, SystemMessage) for m in messages)
        self._add_all(keys=[key], args=[max_messages or 0, self._ttl or 0, int(system), *items])

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Remove the conversation."""
        self._client.delete(self._key(conversation_id))


def _escape(prefix: str) -> str:
    """``prefix`` with Redis glob characters escaped."""
    return ''.join('\\' + c if c in '*?[]\\' else c for c in prefix)
