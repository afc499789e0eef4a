"""Paused runs: :class:`RunState` and the stores that keep them (see :mod:`toolweave.approvals`)."""

from toolweave.runstate.base import DEFAULT_TTL, InMemoryRunStateStore, RunStateStore
from toolweave.runstate.redis import RedisRunStateStore
from toolweave.runstate.sqlite import SqliteRunStateStore
from toolweave.runstate.state import (
    RUN_STATE_VERSION,
    InvalidDecisionError,
    InvalidRunStateError,
    MissingDecisionError,
    RunAlreadyResumedError,
    RunState,
    RunStateError,
    RunStateNotFoundError,
    RunStateVersionError,
    UnknownToolCallError,
)

__all__ = [
    'DEFAULT_TTL',
    'RUN_STATE_VERSION',
    'InMemoryRunStateStore',
    'InvalidDecisionError',
    'InvalidRunStateError',
    'MissingDecisionError',
    'RedisRunStateStore',
    'RunAlreadyResumedError',
    'RunState',
    'RunStateError',
    'RunStateNotFoundError',
    'RunStateStore',
    'RunStateVersionError',
    'SqliteRunStateStore',
    'UnknownToolCallError',
]
