"""``SqliteRunStateStore``: paused runs in a SQLite file (standard-library ``sqlite3``), the embedded default.

One row per run: its JSON state (``NULL`` once resumed), its expiry (Unix time) and whether it was
resumed. :meth:`~SqliteRunStateStore.claim` is one ``UPSERT`` in a ``BEGIN IMMEDIATE`` transaction:
SQLite's write lock serialises concurrent claims from any thread or process sharing the file, so
exactly one succeeds. Expired rows are deleted on each save and claim. A database file deleted or
replaced while the store is open is noticed on the next use (its inode changed) and the store opens
the file at ``path`` again, so a save never goes to a deleted file no other process can see.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from toolweave.runstate.base import DEFAULT_TTL, check_ttl
from toolweave.runstate.state import RunAlreadyResumedError, RunState, RunStateNotFoundError

__all__ = ['SqliteRunStateStore']

_TABLE_PATTERN = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_T = TypeVar('_T')


class SqliteRunStateStore:
    """Paused runs in a SQLite database.

    >>> store = SqliteRunStateStore(':memory:')

    Args:
        path: Database file (created if missing), shared by every process that may resume the runs,
            or ``':memory:'`` (private to this store).
        table: Table name (letters, digits, ``_``).
        ttl: Seconds a paused run, and the mark that it was resumed, are kept (default one week;
            ``None``: forever).
        key: Secret key signing the stored states (see :class:`~toolweave.runstate.RunState`);
            ``None``: a checksum only.
        busy_timeout: Seconds to wait for another process's write lock.

    Raises:
        ValueError: ``table`` is not a plain identifier, or ``ttl`` not a positive number.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = 'toolweave_runs.db',
        *,
        table: str = 'toolweave_run_states',
        ttl: float | None = DEFAULT_TTL,
        key: bytes | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        if not _TABLE_PATTERN.match(table):
            raise ValueError(f'table must be a plain SQL identifier, got {table!r}')
        self._path = os.fspath(path)
        self._table = table
        self._ttl = check_ttl(ttl)
        self._key = key
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._inode: tuple[int, int] | None = None  # (device, inode) of the open file

    def _file_inode(self) -> tuple[int, int] | None:
        try:
            stat = os.stat(self._path)
        except OSError:
            return None
        return stat.st_dev, stat.st_ino

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None and self._path != ':memory:' and self._file_inode() != self._inode:
            self._connection.close()  # the file was deleted or replaced: open the one at the path now
            self._connection = None
        if self._connection is None:
            connection = sqlite3.connect(
                self._path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                if self._path != ':memory:':
                    self._retry_locked(lambda: connection.execute('PRAGMA journal_mode=WAL'))
                self._retry_locked(
                    lambda: connection.execute(
                        f'CREATE TABLE IF NOT EXISTS {self._table} (run_id TEXT PRIMARY KEY, state TEXT, '
                        'expires REAL NOT NULL, resumed INTEGER NOT NULL DEFAULT 0)'
                    )
                )
            except BaseException:
                connection.close()
                raise
            self._connection = connection
            self._inode = self._file_inode()
        return self._connection

    def _retry_locked(self, statement: Callable[[], object]) -> None:
        """A set-up step, retried within ``busy_timeout`` while another process holds the lock (as the memory store)."""
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
        """``step`` in one ``BEGIN IMMEDIATE`` transaction, after deleting expired rows."""
        with self._lock:
            connection = self._connect()
            with _transaction(connection):
                connection.execute(f'DELETE FROM {self._table} WHERE expires <= ?', (time.time(),))
                return step(connection)

    def _expires(self) -> float:
        return time.time() + self._ttl if self._ttl is not None else float('inf')

    def save(self, state: RunState) -> None:
        """Keep ``state`` (a run resumed already stays resumed).

        Raises:
            TypeError: a message's metadata holds a value JSON cannot represent.
        """
        text = state.to_json(self._key)
        self._write(
            lambda connection: connection.execute(
                f'INSERT INTO {self._table} (run_id, state, expires, resumed) VALUES (?, ?, ?, 0) '
                'ON CONFLICT(run_id) DO UPDATE SET state = excluded.state, expires = excluded.expires '
                'WHERE resumed = 0',
                (state.run_id, text, self._expires()),
            )
        )

    def load(self, run_id: str) -> RunState:
        """The paused run (see :meth:`~toolweave.runstate.RunStateStore.load`)."""
        with self._lock:
            row = (
                self._connect()
                .execute(
                    f'SELECT state, resumed FROM {self._table} WHERE run_id = ? AND expires > ?', (run_id, time.time())
                )
                .fetchone()
            )
        if row is None:
            raise RunStateNotFoundError(run_id)
        if row[1]:
            raise RunAlreadyResumedError(run_id)
        return RunState.from_json(row[0], self._key)

    def claim(self, run_id: str) -> None:
        """Mark resumed in one transaction (see :meth:`~toolweave.runstate.RunStateStore.claim`)."""

        def upsert(connection: sqlite3.Connection) -> int:
            cursor = connection.execute(
                f'INSERT INTO {self._table} (run_id, state, expires, resumed) VALUES (?, NULL, ?, 1) '
                'ON CONFLICT(run_id) DO UPDATE SET state = NULL, resumed = 1, expires = excluded.expires '
                'WHERE resumed = 0',
                (run_id, self._expires()),
            )
            return cursor.rowcount

        if self._write(upsert) != 1:
            raise RunAlreadyResumedError(run_id)

    def delete(self, run_id: str) -> None:
        """Forget the paused run (a resumed mark stays)."""
        self._write(lambda c: c.execute(f'DELETE FROM {self._table} WHERE run_id = ? AND resumed = 0', (run_id,)))

    def close(self) -> None:
        """Close the connection (reopened on next use)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    connection.execute('BEGIN IMMEDIATE')
    try:
        yield
    except BaseException:
        connection.execute('ROLLBACK')
        raise
    connection.execute('COMMIT')
