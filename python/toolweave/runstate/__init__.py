"""Paused runs: :class:`RunState` and the stores that keep them (see :mod:`toolweave.approvals`).

The names are imported on first use (:mod:`toolweave._lazy`).
"""

from typing import TYPE_CHECKING

from toolweave._lazy import exports

if TYPE_CHECKING:
    from toolweave.runstate.base import DEFAULT_TTL, InMemoryRunStateStore, RunStateStore
    from toolweave.runstate.redis import RedisRunStateStore
    from toolweave.runstate.sqlite import SqliteRunStateStore
    from toolweave.runstate.state import (
        RUN_STATE_VERSION,
        InvalidDecisionError,
        InvalidRunStateError,
        MissingDecisionError,
        MissingToolError,
        RunAlreadyResumedError,
        RunPausedError,
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
    'MissingToolError',
    'RedisRunStateStore',
    'RunAlreadyResumedError',
    'RunPausedError',
    'RunState',
    'RunStateError',
    'RunStateNotFoundError',
    'RunStateStore',
    'RunStateVersionError',
    'SqliteRunStateStore',
    'UnknownToolCallError',
]

if not TYPE_CHECKING:  # type checkers see the imports above; an unknown name stays an error for them
    __getattr__, __dir__ = exports(
        __name__,
        globals(),
        {
            'toolweave.runstate.base': ('DEFAULT_TTL', 'InMemoryRunStateStore', 'RunStateStore'),
            'toolweave.runstate.redis': ('RedisRunStateStore',),
            'toolweave.runstate.sqlite': ('SqliteRunStateStore',),
            'toolweave.runstate.state': (
                'RUN_STATE_VERSION',
                'InvalidDecisionError',
                'InvalidRunStateError',
                'MissingDecisionError',
                'MissingToolError',
                'RunAlreadyResumedError',
                'RunPausedError',
                'RunState',
                'RunStateError',
                'RunStateNotFoundError',
                'RunStateVersionError',
                'UnknownToolCallError',
            ),
        },
    )
