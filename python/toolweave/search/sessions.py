"""``ToolSearchSessions``: per conversation, the tools discovered and the conversation's own tool index.

Why one index per conversation (as Spring AI 2.0's per-session ``ToolIndex``): with one index shared
by every request, the tools of other requests changed the ranking (BM25's IDF, regex ties) and had
to be filtered out of the results afterwards. Each session's index holds exactly the tools of the
session's latest request; it is built at loop start, rebuilt when the tool set (or the index
factory) changes, and cleared (``ToolIndex.clear()``) when the session is evicted or cleared.

Locking: one lock guards the LRU and the discovered names; each session has its own re-entrant
lock, held while its index is built or searched, so conversations never wait for each other's
searches. The two are never held together.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from toolweave.search.base import ToolIndex, ToolIndexFactory
from toolweave.tools.definition import ToolDefinition

__all__ = ['DEFAULT_MAX_SESSIONS', 'ToolSearchSessions']

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
        max_sessions: Conversations kept (default 1000).

    Raises:
        ValueError: ``max_sessions`` < 1.
    """

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        if not isinstance(max_sessions, int) or isinstance(max_sessions, bool) or max_sessions < 1:
            raise ValueError(f'max_sessions must be an int >= 1, got {max_sessions!r}')
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def discovered(self, session_id: str) -> tuple[str, ...]:
        """The tool names discovered in ``session_id``, in discovery order (marks it recently used)."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return ()
            self._sessions.move_to_end(session_id)
            return tuple(session.discovered)

    def add(self, session_id: str, names: Iterable[str]) -> None:
        """Add ``names`` to ``session_id`` (created when new; the oldest session goes past the bound)."""
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
        """Forget one session, or every session when ``session_id`` is ``None``; their indexes are cleared."""
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
