"""``RedisRunStateStore``: paused runs in Redis, for services with several workers (redis-py).

A paused run is a string key ``<prefix>state:<run_id>`` holding its JSON state; a resumed run has a
mark ``<prefix>resumed:<run_id>``; both expire after the time to live. Saving and claiming are Lua
scripts (atomic on the server): a claim sets the mark only when it is absent (``SET NX``) and drops
the state in the same step, so of concurrent claims from any process exactly one succeeds. redis-py
is imported only when a store is built without a client (``pip install redis``).
"""

from __future__ import annotations

from typing import Any

from toolweave.runstate.base import DEFAULT_TTL, check_ttl
from toolweave.runstate.state import RunAlreadyResumedError, RunState, RunStateNotFoundError

__all__ = ['RedisRunStateStore']

# KEYS[1]: state, KEYS[2]: resumed mark; ARGV[1]: state JSON, ARGV[2]: TTL in ms (0: none)
_SAVE = r"""
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""
# KEYS[1]: state, KEYS[2]: resumed mark; ARGV[1]: TTL in ms (0: none)
_CLAIM = r"""
local claimed
if tonumber(ARGV[1]) > 0 then claimed = redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1])
else claimed = redis.call('SET', KEYS[2], '1', 'NX') end
if not claimed then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""


class RedisRunStateStore:
    """Paused runs in Redis.

    Args:
        client: A ``redis.Redis`` client (sync); built from ``url`` when ``None``.
        url: Used when ``client`` is ``None`` (``redis://host:port/db``).
        key_prefix: Prefix of every key this store owns.
        ttl: Seconds a paused run, and the mark that it was resumed, are kept (default one week;
            ``None``: forever).
        key: Secret key signing the stored states (see :class:`~toolweave.runstate.RunState`).
        socket_timeout: Seconds a command may take (only when the client is built from ``url``).

    Raises:
        ImportError: no ``client`` was given and redis-py is not installed.
        ValueError: ``ttl`` is not a positive number.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str = 'redis://127.0.0.1:6379/0',
        key_prefix: str = 'toolweave:runs:',
        ttl: float | None = DEFAULT_TTL,
        key: bytes | None = None,
        socket_timeout: float = 10.0,
    ) -> None:
        checked = check_ttl(ttl)
        self._ttl_ms = int(checked * 1000) if checked is not None else 0
        if client is None:
            try:
                import redis
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ImportError('RedisRunStateStore needs redis-py: pip install redis') from exc
            client = redis.Redis.from_url(url, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout)
        self._client = client
        self._prefix = key_prefix
        self._key = key
        self._save = client.register_script(_SAVE)
        self._claim = client.register_script(_CLAIM)

    def _keys(self, run_id: str) -> list[str]:
        return [f'{self._prefix}state:{run_id}', f'{self._prefix}resumed:{run_id}']

    def save(self, state: RunState) -> None:
        """Keep ``state`` (a run resumed already stays resumed)."""
        self._save(keys=self._keys(state.run_id), args=[state.to_json(self._key), self._ttl_ms])

    def load(self, run_id: str) -> RunState:
        """The paused run (see :meth:`~toolweave.runstate.RunStateStore.load`)."""
        text, resumed = self._client.mget(self._keys(run_id))
        if resumed is not None:
            raise RunAlreadyResumedError(run_id)
        if text is None:
            raise RunStateNotFoundError(run_id)
        return RunState.from_json(text, self._key)

    def claim(self, run_id: str) -> None:
        """Mark resumed atomically (see :meth:`~toolweave.runstate.RunStateStore.claim`)."""
        if not self._claim(keys=self._keys(run_id), args=[self._ttl_ms]):
            raise RunAlreadyResumedError(run_id)

    def delete(self, run_id: str) -> None:
        """Forget the paused run (a resumed mark stays)."""
        self._client.delete(self._keys(run_id)[0])
