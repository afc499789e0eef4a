"""``SqliteChatMemoryRepository``: the embedded default store (standard-library ``sqlite3``).

One row per message, JSON text of :func:`toolweave.memory.serialization.message_to_dict`, so tool
calls and tool responses come back exactly as stored (Spring's JDBC store drops them). The schema is
created on first use. One connection per repository, guarded by a lock, makes it safe to share
between threads; ``save_all`` runs in one ``BEGIN IMMEDIATE`` transaction, and SQLite's file locks
(with a busy timeout, WAL journal for files) make several processes on one file safe.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from collections.abc import Sequence
from types import TracebackType

from toolweave.chat.messages import Message
from toolweave.memory.base import check_conversation_id
from toolweave.memory.serialization import dumps, loads

__all__ = ['SqliteChatMemoryRepository']

_TABLE_PATTERN = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


class SqliteChatMemoryRepository:
    """Conversations in a SQLite database.

    >>> repository = SqliteChatMemoryRepository(':memory:')
    >>> repository.find_conversation_ids()
    []

    Args:
        path: Database file (created if missing) or ``':memory:'`` (private to this repository).
        table: Table name (letters, digits, ``_``).
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
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(
                self._path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                if self._path != ':memory:':
                    self._retry_locked(connection, 'PRAGMA journal_mode=WAL')
                self._retry_locked(
                    connection,
                    f'CREATE TABLE IF NOT EXISTS {self._table} ('
                    'conversation_id TEXT NOT NULL, position INTEGER NOT NULL, message TEXT NOT NULL, '
                    'PRIMARY KEY (conversation_id, position))',
                )
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def _retry_locked(self, connection: sqlite3.Connection, statement: str) -> None:
        """Run a set-up statement, retrying within ``busy_timeout`` while another process holds the lock.

        SQLite does not always call its busy handler for these (switching to WAL while another
        connection opens the same new file fails at once with ``database is locked``).
        """
        deadline = time.monotonic() + self._busy_timeout
        delay = 0.005
        while True:
            try:
                connection.execute(statement)
                return
            except sqlite3.OperationalError as exc:
                if 'locked' not in str(exc) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.2)

    def find_conversation_ids(self) -> list[str]:
        """Every stored conversation id, sorted."""
        with self._lock:
            rows = self._connect().execute(f'SELECT DISTINCT conversation_id FROM {self._table} ORDER BY 1').fetchall()
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
        rows = [(conversation_id, position, dumps(message)) for position, message in enumerate(messages)]
        with self._lock:
            connection = self._connect()
            connection.execute('BEGIN IMMEDIATE')
            try:
                connection.execute(f'DELETE FROM {self._table} WHERE conversation_id = ?', (conversation_id,))
                connection.executemany(
                    f'INSERT INTO {self._table} (conversation_id, position, message) VALUES (?, ?, ?)', rows
                )
            except BaseException:
                connection.execute('ROLLBACK')
                raise
            connection.execute('COMMIT')

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Remove the conversation."""
        check_conversation_id(conversation_id)
        with self._lock:
            self._connect().execute(f'DELETE FROM {self._table} WHERE conversation_id = ?', (conversation_id,))

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
