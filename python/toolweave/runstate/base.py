"""The ``RunStateStore`` protocol and the in-process store.

A store keeps paused runs by run id, each for a time to live, and records which runs were resumed:
:meth:`RunStateStore.claim` marks a run resumed in one atomic step of the store, so of two workers
resuming the same run (threads, processes, machines sharing the store) exactly one wins; the other
gets :class:`~toolweave.runstate.RunAlreadyResumedError`. Implementations:
:class:`InMemoryRunStateStore` (one process), :class:`~toolweave.runstate.SqliteRunStateStore`
(the embedded default: processes sharing a file), :class:`~toolweave.runstate.RedisRunStateStore`
(services with several workers).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Protocol, runtime_checkable

from toolweave.runstate.state import RunAlreadyResumedError, RunState, RunStateNotFoundError

__all__ = ['DEFAULT_TTL', 'InMemoryRunStateStore', 'RunStateStore', 'check_ttl']

DEFAULT_TTL = 7 * 24 * 3600
"""Seconds a paused run (and the mark that it was resumed) is kept by default: one week."""


@runtime_checkable
class RunStateStore(Protocol):
    """Where paused runs wait, keyed by run id, with a time to live."""

    def save(self, state: RunState) -> None:
        """Keep ``state`` under its run id (replacing a state saved before; a resumed run stays resumed)."""
        ...

    def load(self, run_id: str) -> RunState:
        """The paused run ``run_id``, still claimable.

        Raises:
            RunStateNotFoundError: unknown or expired.
            RunAlreadyResumedError: claimed already.
            InvalidRunStateError, RunStateVersionError: the stored text is not a state this build reads.
        """
        ...

    def claim(self, run_id: str) -> None:
        """Mark ``run_id`` resumed and drop its saved state, atomically (works for a run never saved too).

        Raises:
            RunAlreadyResumedError: the run was claimed before (exactly one concurrent claim succeeds).
        """
        ...

    def delete(self, run_id: str) -> None:
        """Forget the paused run (no error when unknown); a resumed mark stays."""
        ...


MAX_TTL = 10**12
"""The largest time to live in seconds (~31,000 years; Redis counts expiries in 64-bit milliseconds)."""


def check_ttl(ttl: float | None) -> float | None:
    """``ttl`` when it is ``None`` (forever) or a positive number of seconds up to :data:`MAX_TTL`.

    Raises:
        ValueError: anything else (``inf`` and ``nan`` too: ``None`` means forever).
    """
    if ttl is not None and (
        isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= MAX_TTL  # nan fails too
    ):
        raise ValueError(f'ttl must be a positive number of seconds up to {MAX_TTL} or None (forever), got {ttl!r}')
    return ttl


class InMemoryRunStateStore:
    """Paused runs in this process's memory (thread-safe); what a ``ChatClient`` without a store uses to claim.

    Args:
        ttl: Seconds a run is kept (default one week; ``None``: until evicted).
        max_runs: Runs kept at most (the oldest go first).

    Raises:
        ValueError: ``ttl`` is not a positive number, or ``max_runs`` not a positive int.
    """

    def __init__(self, *, ttl: float | None = DEFAULT_TTL, max_runs: int = 100_000) -> None:
        if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
            raise ValueError(f'max_runs must be a positive int, got {max_runs!r}')
        self._ttl = check_ttl(ttl)
        self._max = max_runs
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, tuple[RunState | None, float]] = OrderedDict()  # None: resumed

    def _expires(self) -> float:
        return time.monotonic() + self._ttl if self._ttl is not None else float('inf')

    def _live(self, run_id: str) -> tuple[RunState | None, float] | None:
        entry = self._runs.get(run_id)
        if entry is not None and entry[1] <= time.monotonic():
            del self._runs[run_id]
            return None
        return entry

    def _put(self, run_id: str, state: RunState | None) -> None:
        self._runs[run_id] = (state, self._expires())
        self._runs.move_to_end(run_id)
        while len(self._runs) > self._max:
            self._runs.popitem(last=False)

    def save(self, state: RunState) -> None:
        """Keep ``state`` (a run resumed already stays resumed)."""
        with self._lock:
            entry = self._live(state.run_id)
            if entry is None or entry[0] is not None:
                self._put(state.run_id, state)

    def load(self, run_id: str) -> RunState:
        """The paused run (see :meth:`RunStateStore.load`)."""
        with self._lock:
            entry = self._live(run_id)
        if entry is None:
            raise RunStateNotFoundError(run_id)
        if entry[0] is None:
            raise RunAlreadyResumedError(run_id)
        return entry[0]

    def claim(self, run_id: str) -> None:
        """Mark resumed (see :meth:`RunStateStore.claim`)."""
        with self._lock:
            entry = self._live(run_id)
            if entry is not None and entry[0] is None:
                raise RunAlreadyResumedError(run_id)
            self._put(run_id, None)

    def delete(self, run_id: str) -> None:
        """Forget the paused run (a resumed mark stays)."""
        with self._lock:
            entry = self._live(run_id)
            if entry is not None and entry[0] is not None:
                del self._runs[run_id]
