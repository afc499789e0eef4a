"""``ToolSearchSessions``: per conversation, the tools discovered and the conversation's own tool index.

Why one index per conversation (as Spring AI 2.0's per-session ``ToolIndex``): with one index shared
by every request, the tools of other requests changed the ranking (BM25's IDF, regex ties) and had
to be filtered out of the results afterwards. Each session's index holds exactly the tools of the
session's latest request; it is built at loop start, rebuilt when the tool set (or the index
factory) changes, and cleared (``ToolIndex.clear()``) when the session is evicted or cleared.

Locking: one lock guards the LRU and the discovered names; each session has its own re-entrant
lock, held while its index is built or searched, so conversations never wait for each other's
searches. The two are never held together.

Several processes (workers behind a load balancer, durable runs moving between Temporal workers) can
serve one conversation: give them a shared :class:`DiscoveredToolsStore` (``store=``), and the tools
discovered in one process are the ones every process offers. :class:`SqliteDiscoveredToolsStore`
(one file, processes of one machine) and :class:`RedisDiscoveredToolsStore` (any machine) keep the
discovered names in discovery order; the indexes stay in each process (they are rebuilt from the
request's tools, so nothing is lost). Without a store the names live in this process's LRU.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from toolweave.search.base import ToolIndex, ToolIndexFactory
from toolweave.tools.definition import ToolDefinition

__all__ = [
    'DEFAULT_MAX_SESSIONS',
    'DiscoveredToolsStore',
    'RedisDiscoveredToolsStore',
    'SqliteDiscoveredToolsStore',
    'ToolSearchSessions',
]

DEFAULT_MAX_SESSIONS = 1000
"""Conversations kept by default (as Spring's ``LruEvictionStrategy(1000)``)."""


class _Session:
    """One conversation: discovered names (guarded by the store's lock) and its index (by ``lock``)."""

    __slots__ = ('closed', 'definitions', 'discovered', 'factory', 'index', 'lock')

    def __init__(self) -> None:
        self.discovered: dict[str, None] = {}
        self.lock = threading.RLock()
        self.index: ToolIndex | None = None
        self.factory: ToolIndexFactory | None = None
        self.definitions: tuple[ToolDefinition, ...] | None = None
        self.closed = False

    def ensure(self, definitions: tuple[ToolDefinition, ...], factory: ToolIndexFactory) -> ToolIndex:
        """The index holding exactly ``definitions``, made by ``factory`` (built when needed; hold ``lock``).

        Raises:
            TypeError: ``factory`` returned something that is not a :class:`ToolIndex`.
            Exception: whatever the new index's ``index_tools`` raises (the index is then dropped on the
                next use).
        """
        current = self.index
        if current is not None and self.factory == factory and self.definitions == definitions:
            return current
        self.drop_index()
        index = factory()
        if not isinstance(index, ToolIndex):
            raise TypeError(f'tool_index_factory must return a ToolIndex, got {type(index).__name__}')
        self.index, self.factory = index, factory
        index.index_tools(definitions)
        self.definitions = definitions
        return index

    def drop_index(self) -> None:
        """Clear and forget the index (hold ``lock``)."""
        index, self.index, self.factory, self.definitions = self.index, None, None, None
        if index is not None:
            index.clear()


class ToolSearchSessions:
    """Tools discovered and a tool index per conversation, least recently used conversations evicted first.

    Thread-safe. Discovery order is kept (the model sees tools in the order it found them). Memory is
    bounded by ``max_sessions`` sessions, each holding the names it discovered and an index of its
    latest request's tools. An evicted or cleared session's index is cleared (``clear()``), so an
    index holding outside resources gives them back.

    >>> from toolweave.search import RegexToolIndex
    >>> from toolweave.tools import ToolDefinition
    >>> sessions = ToolSearchSessions(max_sessions=2)
    >>> with sessions.using_index('alice', (ToolDefinition('get_weather', 'Weather'),), RegexToolIndex) as index:
    ...     [r.name for r in index.search('weather')]
    ['get_weather']
    >>> sessions.add('alice', ['get_weather'])
    >>> sessions.discovered('alice')
    ('get_weather',)

    Args:
        max_sessions: Conversations kept in this process (default 1000): their indexes, and their
            discovered names when there is no ``store``.
        store: Where the discovered names live, shared by every process using it (default: this
            process's LRU). Its own bounds apply (e.g. the Redis store's ``ttl``).

    Raises:
        ValueError: ``max_sessions`` < 1.
        TypeError: ``store`` is not a :class:`DiscoveredToolsStore`.
    """

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS, *, store: DiscoveredToolsStore | None = None) -> None:
        if not isinstance(max_sessions, int) or isinstance(max_sessions, bool) or max_sessions < 1:
            raise ValueError(f'max_sessions must be an int >= 1, got {max_sessions!r}')
        if store is not None and not isinstance(store, DiscoveredToolsStore):
            raise TypeError(f'store must be a DiscoveredToolsStore, not {type(store).__name__}')
        self.max_sessions = max_sessions
        self.store = store
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def discovered(self, session_id: str) -> tuple[str, ...]:
        """The tool names discovered in ``session_id``, in discovery order (marks it recently used)."""
        if self.store is not None:
            return self.store.discovered(session_id)
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return ()
            self._sessions.move_to_end(session_id)
            return tuple(session.discovered)

    def add(self, session_id: str, names: Iterable[str]) -> None:
        """Add ``names`` to ``session_id`` (created when new; the oldest session goes past the bound)."""
        if self.store is not None:
            self.store.add(session_id, list(names))
            return
        with self._lock:
            session = self._touch(session_id)
            for name in names:
                session.discovered.setdefault(name, None)
            evicted = self._evict()
        _close(evicted)

    @contextmanager
    def using_index(
        self, session_id: str, definitions: Sequence[ToolDefinition], factory: ToolIndexFactory
    ) -> Iterator[ToolIndex]:
        """The session's index, holding exactly ``definitions``, for the ``with`` block.

        The session is created when new and marked recently used. Its index is made with
        ``factory`` and filled when the session has none, or when ``definitions`` (compared by value,
        in order) or ``factory`` (compared with ``==``) differ from the last ones; the old index is
        cleared. Other users of the same session wait until the block ends.

        Raises:
            TypeError: ``factory`` returned something that is not a :class:`ToolIndex`.
            Exception: whatever the index raises while indexing.
        """
        wanted = tuple(definitions)
        with self._lock:
            session = self._touch(session_id)
            evicted = self._evict()
        _close(evicted)
        with session.lock:
            try:
                yield session.ensure(wanted, factory)
            finally:
                if session.closed:  # evicted while in use: nobody else will clear it
                    session.drop_index()

    def index(self, session_id: str) -> ToolIndex | None:
        """The session's current index (``None`` when it has none); does not mark it used."""
        with self._lock:
            session = self._sessions.get(session_id)
        return None if session is None else session.index

    def clear(self, session_id: str | None = None) -> None:
        """Forget one session, or every session when ``session_id`` is ``None``; their indexes are cleared.

        With a ``store``, its names go too (every session of the store when ``session_id`` is ``None``).
        """
        if self.store is not None:
            self.store.clear(session_id)
        with self._lock:
            if session_id is None:
                gone = list(self._sessions.values())
                self._sessions.clear()
            else:
                session = self._sessions.pop(session_id, None)
                gone = [] if session is None else [session]
        _close(gone)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._sessions

    def _touch(self, session_id: str) -> _Session:
        """The session (created when new), marked most recently used; hold ``_lock``."""
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session()
        self._sessions.move_to_end(session_id)
        return session

    def _evict(self) -> list[_Session]:
        """Remove the sessions past the bound, oldest first; hold ``_lock``, then :func:`_close` them."""
        evicted: list[_Session] = []
        while len(self._sessions) > self.max_sessions:
            evicted.append(self._sessions.popitem(last=False)[1])
        return evicted


def _close(sessions: Iterable[_Session]) -> None:
    """Clear the indexes of removed sessions (outside the store's lock: ``clear()`` may be slow)."""
    for session in sessions:
        with session.lock:
            session.closed = True
            session.drop_index()


@runtime_checkable
class DiscoveredToolsStore(Protocol):
    """The tool names discovered per conversation, shared by the processes using the store.

    ``add`` keeps the first-discovery order and ignores names already there; it must be atomic (two
    processes adding to one conversation at once both keep their names).
    """

    def discovered(self, session_id: str) -> tuple[str, ...]:
        """The names discovered in ``session_id``, in discovery order (``()`` when none)."""
        ...

    def add(self, session_id: str, names: Sequence[str]) -> None:
        """Add ``names`` (those not there yet, in order)."""
        ...

    def clear(self, session_id: str | None = None) -> None:
        """Forget one conversation, or all of them (``None``)."""
        ...


class SqliteDiscoveredToolsStore:
    """Discovered tool names in a SQLite file: processes of one machine share it (WAL mode, one transaction per add).

    Args:
        path: The database file (``':memory:'`` for one process only).
        timeout: Seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | Path, *, timeout: float = 10.0) -> None:
        self._connection = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            if str(path) != ':memory:':
                self._connection.execute('PRAGMA journal_mode=WAL')
            self._connection.execute(
                'CREATE TABLE IF NOT EXISTS tool_search_discovered ('
                'session TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, '
                'PRIMARY KEY (session, name))'
            )

    def discovered(self, session_id: str) -> tuple[str, ...]:
        """The names of ``session_id`` in discovery order."""
        with self._lock:
            rows = self._connection.execute(
                'SELECT name FROM tool_search_discovered WHERE session = ? ORDER BY position', (session_id,)
            ).fetchall()
        return tuple(row[0] for row in rows)

    def add(self, session_id: str, names: Sequence[str]) -> None:
        """Append the new ``names`` in one ``BEGIN IMMEDIATE`` transaction (positions after the last one)."""
        if not names:
            return
        with self._lock:
            self._connection.execute('BEGIN IMMEDIATE')
            try:
                for name in names:
                    self._connection.execute(
                        'INSERT OR IGNORE INTO tool_search_discovered (session, position, name) VALUES '
                        '(?, (SELECT COALESCE(MAX(position) + 1, 0) FROM tool_search_discovered WHERE session = ?), ?)',
                        (session_id, session_id, name),
                    )
            except BaseException:
                self._connection.execute('ROLLBACK')
                raise
            self._connection.execute('COMMIT')

    def clear(self, session_id: str | None = None) -> None:
        """Delete one conversation's names, or every name."""
        with self._lock:
            if session_id is None:
                self._connection.execute('DELETE FROM tool_search_discovered')
            else:
                self._connection.execute('DELETE FROM tool_search_discovered WHERE session = ?', (session_id,))

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._connection.close()


# KEYS[1]: the session's sorted set; ARGV[1]: TTL seconds (0: none); ARGV[2..]: names. A new name's
# score is the set's size, so ZRANGE gives discovery order; one script, so concurrent adds interleave safely.
_REDIS_ADD = r"""
for i = 2, #ARGV do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], redis.call('ZCARD', KEYS[1]), ARGV[i])
  end
end
local ttl = tonumber(ARGV[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return 0
"""


class RedisDiscoveredToolsStore:
    """Discovered tool names in Redis (one sorted set per conversation under ``key_prefix``), for any number of machines.

    Args:
        client: A redis-py client (default: one from ``url``).
        url: Used when no client is given.
        key_prefix: Prefix of the keys.
        ttl: Seconds a conversation's names live after its last add (``None``: forever).

    Raises:
        ValueError: ``ttl`` is not a positive int.
        ImportError: no ``client`` and redis-py is not installed.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str = 'redis://127.0.0.1:6379/0',
        key_prefix: str = 'toolweave:tool_search:',
        ttl: int | None = None,
    ) -> None:
        if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 1):
            raise ValueError(f'ttl must be a positive int of seconds or None, got {ttl!r}')
        if client is None:
            try:
                import redis
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ImportError('RedisDiscoveredToolsStore needs redis-py: pip install redis') from exc
            client = redis.Redis.from_url(url)
        self._client = client
        self._prefix = key_prefix
        self._ttl = ttl or 0
        self._add = client.register_script(_REDIS_ADD)

    def discovered(self, session_id: str) -> tuple[str, ...]:
        """The names of ``session_id`` in discovery order."""
        names = self._client.zrange(self._prefix + session_id, 0, -1)
        return tuple(n.decode() if isinstance(n, bytes) else str(n) for n in names)

    def add(self, session_id: str, names: Sequence[str]) -> None:
        """Append the new ``names`` in one script (atomic) and renew the TTL."""
        if names:
            self._add(keys=[self._prefix + session_id], args=[self._ttl, *names])

    def clear(self, session_id: str | None = None) -> None:
        """Delete one conversation's names, or every key under the prefix."""
        if session_id is not None:
            self._client.delete(self._prefix + session_id)
            return
        pattern = re.sub(r'([*?\[\]\\])', r'\\\1', self._prefix) + '*'
        keys = list(self._client.scan_iter(match=pattern, count=500))
        if keys:
            self._client.delete(*keys)
