"""``SqliteChatMemoryRepository``: the embedded default store (standard-library ``sqlite3``).

One row per message, JSON text of :func:`toolweave.memory.serialization.message_to_dict`, so tool
calls and tool responses come back exactly as stored (Spring's JDBC store drops them). Each row also
keeps its window kind and eviction group (:mod:`toolweave.memory.window`), and a second table
(``<table>_conversations``) each conversation's size, so :meth:`~SqliteChatMemoryRepository.add_all`
appends and evicts with a few indexed statements: its cost does not grow with the conversation.

The schema is created on first use; a table written by an earlier version (no ``kind``/``grp``
columns) is migrated once, in one transaction. One connection per repository, guarded by a lock,
makes it safe to share between threads; every write runs in one ``BEGIN IMMEDIATE`` transaction,
and SQLite's file locks (with a busy timeout, WAL journal for files) make several processes on one
file safe: concurrent ``add_all`` calls all keep their messages.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TypeVar

from toolweave.chat.messages import Message
from toolweave.memory.base import check_conversation_id
from toolweave.memory.serialization import dumps, loads
from toolweave.memory.window import Kind, assign_groups, last_evicted_group, message_kind

__all__ = ['SqliteChatMemoryRepository']

_TABLE_PATTERN = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_T = TypeVar('_T')


class SqliteChatMemoryRepository:
    """Conversations in a SQLite database.

    >>> repository = SqliteChatMemoryRepository(':memory:')
    >>> repository.find_conversation_ids()
    []

    Args:
        path: Database file (created if missing) or ``':memory:'`` (private to this repository).
        table: Table name (letters, digits, ``_``); conversation sizes live in ``<table>_conversations``.
        busy_timeout: Seconds to wait for another process's write lock.

    Raises:
        ValueError: ``table`` is not a plain identifier.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ':memory:',
        *,
        table: str = 'toolweave_chat_memory',
        busy_timeout: float = 30.0,
    ) -> None:
        if not _TABLE_PATTERN.match(table):
            raise ValueError(f'table must be a plain SQL identifier, got {table!r}')
        self._path = os.fspath(path)
        self._table = table
        self._sizes = f'{table}_conversations'
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    # -- connection and schema ------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(
                self._path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                if self._path != ':memory:':
                    self._retry_locked(lambda: connection.execute('PRAGMA journal_mode=WAL'))
                self._retry_locked(lambda: self._create_schema(connection))
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def _create_schema(self, connection: sqlite3.Connection) -> None:
        """Create the tables, or migrate a table of an earlier version, in one transaction."""
        table, sizes = self._table, self._sizes
        with _transaction(connection):
            connection.execute(
                f'CREATE TABLE IF NOT EXISTS {table} ('
                'conversation_id TEXT NOT NULL, position INTEGER NOT NULL, message TEXT NOT NULL, '
                'kind TEXT, grp INTEGER, PRIMARY KEY (conversation_id, position))'
            )
            columns = {row[1] for row in connection.execute(f'PRAGMA table_info({table})')}
            migrate = 'grp' not in columns
            if migrate:
                connection.execute(f'ALTER TABLE {table} ADD COLUMN kind TEXT')
                connection.execute(f'ALTER TABLE {table} ADD COLUMN grp INTEGER')
            connection.execute(f'CREATE INDEX IF NOT EXISTS {table}_groups ON {table} (conversation_id, grp, position)')
            connection.execute(
                f'CREATE TABLE IF NOT EXISTS {sizes} (conversation_id TEXT PRIMARY KEY, size INTEGER NOT NULL)'
            )
            if migrate:
                self._migrate(connection)

    def _migrate(self, connection: sqlite3.Connection) -> None:
        """Fill ``kind``, ``grp`` and the sizes table for rows written by an earlier version."""
        ids = [row[0] for row in connection.execute(f'SELECT DISTINCT conversation_id FROM {self._table}')]
        for conversation_id in ids:
            rows = connection.execute(
                f'SELECT position, message FROM {self._table} WHERE conversation_id = ? ORDER BY position',
                (conversation_id,),
            ).fetchall()
            kinds = [message_kind(loads(message)) for _, message in rows]
            groups, _ = assign_groups(kinds, (position for position, _ in rows))
            connection.executemany(
                f'UPDATE {self._table} SET kind = ?, grp = ? WHERE conversation_id = ? AND position = ?',
                [(k, g, conversation_id, p) for k, g, (p, _) in zip(kinds, groups, rows, strict=True)],
            )
            connection.execute(f'INSERT INTO {self._sizes} VALUES (?, ?)', (conversation_id, len(rows)))

    def _retry_locked(self, statement: Callable[[], object]) -> None:
        """Run a set-up step, retrying within ``busy_timeout`` while another process holds the lock.

        SQLite does not always call its busy handler for these (switching to WAL while another
        connection opens the same new file fails at once with ``database is locked``).
        """
        deadline = time.monotonic() + self._busy_timeout
        delay = 0.005
        while True:
            try:
                statement()
                return
            except sqlite3.OperationalError as exc:
                if 'locked' not in str(exc) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.2)

    def _write(self, step: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``step`` in one ``BEGIN IMMEDIATE`` transaction (rolled back when it raises)."""
        with self._lock:
            connection = self._connect()
            with _transaction(connection):
                return step(connection)

    # -- the repository -------------------------------------------------------------------------

    def find_conversation_ids(self) -> list[str]:
        """Every stored conversation id, sorted."""
        with self._lock:
            rows = self._connect().execute(f'SELECT conversation_id FROM {self._sizes} ORDER BY 1').fetchall()
        return [row[0] for row in rows]

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages, oldest first.

        Raises:
            ValueError: a stored row is not a message (the database was changed by something else).
        """
        check_conversation_id(conversation_id)
        with self._lock:
            rows = (
                self._connect()
                .execute(
                    f'SELECT message FROM {self._table} WHERE conversation_id = ? ORDER BY position', (conversation_id,)
                )
                .fetchall()
            )
        return [loads(row[0]) for row in rows]

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the conversation's messages, atomically.

        Raises:
            TypeError: a message's metadata holds a value JSON cannot represent (nothing is changed).
        """
        check_conversation_id(conversation_id)
        rows = _rows(messages)

        def replace(connection: sqlite3.Connection) -> None:
            self._delete(connection, conversation_id)
            self._insert(connection, conversation_id, rows, 0, None)
            self._set_size(connection, conversation_id, len(rows))

        self._write(replace)

    def add_all(self, conversation_id: str, messages: Sequence[Message], *, max_messages: int | None = None) -> None:
        """Append ``messages`` and apply the window, in one ``BEGIN IMMEDIATE`` transaction.

        Old system messages go when a new one comes; the window evicts whole groups, oldest first
        (:mod:`toolweave.memory.window`). A few indexed statements, whatever the conversation's length.

        Raises:
            TypeError: a message's metadata holds a value JSON cannot represent (nothing is changed).
        """
        check_conversation_id(conversation_id)
        rows = _rows(messages)
        self._write(lambda connection: self._add(connection, conversation_id, rows, max_messages))

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Remove the conversation."""
        check_conversation_id(conversation_id)
        self._write(lambda connection: self._delete(connection, conversation_id))

    def close(self) -> None:
        """Close the connection (a later call reopens it)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> SqliteChatMemoryRepository:  # noqa: PYI034
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    # -- statements (inside a transaction) ------------------------------------------------------

    def _add(
        self, connection: sqlite3.Connection, conversation_id: str, rows: list[tuple[Kind, str]], window: int | None
    ) -> None:
        table = self._table
        size = self._size(connection, conversation_id)
        if any(kind == 's' for kind, _ in rows):
            size -= connection.execute(
                f'DELETE FROM {table} WHERE conversation_id = ? AND grp IS NULL', (conversation_id,)
            ).rowcount
        last = connection.execute(f'SELECT MAX(position) FROM {table} WHERE conversation_id = ?', (conversation_id,))
        start = (last.fetchone()[0] or 0) + 1
        self._insert(connection, conversation_id, rows, start, self._open_group(connection, conversation_id))
        size += len(rows)
        if window is not None and size > window:
            size -= self._evict(connection, conversation_id, size - window)
        self._set_size(connection, conversation_id, size)

    def _insert(
        self,
        connection: sqlite3.Connection,
        conversation_id: str,
        rows: list[tuple[Kind, str]],
        start: int,
        open_group: int | None,
    ) -> None:
        """Insert ``rows`` from position ``start``, after a last group that is ``open_group`` when a call's."""
        positions = range(start, start + len(rows))
        groups, _ = assign_groups((kind for kind, _ in rows), positions, open_group)
        connection.executemany(
            f'INSERT INTO {self._table} (conversation_id, position, message, kind, grp) VALUES (?, ?, ?, ?, ?)',
            [(conversation_id, p, text, kind, g) for p, (kind, text), g in zip(positions, rows, groups, strict=True)],
        )

    def _evict(self, connection: sqlite3.Connection, conversation_id: str, excess: int) -> int:
        """Delete the oldest groups holding at least ``excess`` messages (or all groups); the number of rows deleted."""
        cursor = connection.execute(
            f'SELECT grp, COUNT(*) FROM {self._table} WHERE conversation_id = ? AND grp IS NOT NULL '
            'GROUP BY grp ORDER BY grp',
            (conversation_id,),
        )
        try:
            cut = last_evicted_group(((int(g), int(n)) for g, n in cursor), excess)
        finally:
            cursor.close()
        if cut is None:
            return 0
        return connection.execute(
            f'DELETE FROM {self._table} WHERE conversation_id = ? AND grp IS NOT NULL AND grp <= ?',
            (conversation_id, cut),
        ).rowcount

    def _open_group(self, connection: sqlite3.Connection, conversation_id: str) -> int | None:
        """The group of the last non-system row when it is a tool-call group (a new tool response joins it)."""
        row = connection.execute(
            f'SELECT position, kind, grp FROM {self._table} WHERE conversation_id = ? AND grp IS NOT NULL '
            'ORDER BY grp DESC, position DESC LIMIT 1',
            (conversation_id,),
        ).fetchone()
        if row is None:
            return None
        position, kind, group = row
        joined = kind == 't' and group != position  # a tool response inside a call's group
        return int(group) if kind == 'c' or joined else None

    def _size(self, connection: sqlite3.Connection, conversation_id: str) -> int:
        row = connection.execute(f'SELECT size FROM {self._sizes} WHERE conversation_id = ?', (conversation_id,))
        found = row.fetchone()
        return 0 if found is None else int(found[0])

    def _set_size(self, connection: sqlite3.Connection, conversation_id: str, size: int) -> None:
        if size > 0:
            connection.execute(
                f'INSERT INTO {self._sizes} VALUES (?, ?) ON CONFLICT (conversation_id) DO UPDATE SET size = excluded.size',
                (conversation_id, size),
            )
        else:
            connection.execute(f'DELETE FROM {self._sizes} WHERE conversation_id = ?', (conversation_id,))

    def _delete(self, connection: sqlite3.Connection, conversation_id: str) -> None:
        connection.execute(f'DELETE FROM {self._table} WHERE conversation_id = ?', (conversation_id,))
        connection.execute(f'DELETE FROM {self._sizes} WHERE conversation_id = ?', (conversation_id,))


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` when the block (or the commit) raises."""
    connection.execute('BEGIN IMMEDIATE')
    try:
        yield
        connection.execute('COMMIT')
    except BaseException:
        if connection.in_transaction:  # SQLite may have rolled back already (e.g. disk full)
            connection.execute('ROLLBACK')
        raise


def _rows(messages: Sequence[Message]) -> list[tuple[Kind, str]]:
    """``(kind, JSON)`` of each message, before any transaction starts (a ``TypeError`` changes nothing)."""
    return [(message_kind(m), dumps(m)) for m in messages]
