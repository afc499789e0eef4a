"""The MCP client's private event loop: sessions live on one background loop, callers use them from anywhere.

An MCP session (anyio task groups underneath) must be entered and left in one task of one loop, while
tools are called from blocking code, from ``acall()`` on the caller's loop and from ``stream()`` on the
stream's private loop. So every session runs on this loop (toolweave's ``_LoopThread``, as sync streams
use), and callers hand it coroutines: :meth:`BackgroundLoop.run` blocks, :meth:`BackgroundLoop.arun` awaits
(a cancelled caller cancels the coroutine on the background loop).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from toolweave.client import _LoopThread

__all__ = ['BackgroundLoop']

_T = TypeVar('_T')


class BackgroundLoop:
    """A lazily started background event loop thread (``toolweave-mcp``)."""

    def __init__(self) -> None:
        self._thread: _LoopThread | None = None
        self._lock = threading.Lock()

    def _loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._thread is None:
                self._thread = _LoopThread('toolweave-mcp')
            return self._thread.loop

    def on_loop(self) -> bool:
        """Whether the caller runs on this background loop."""
        thread = self._thread
        if thread is None:
            return False
        try:
            return asyncio.get_running_loop() is thread.loop
        except RuntimeError:
            return False

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coroutine`` on the background loop and wait for its result in this thread.

        Raises:
            RuntimeError: called from the background loop itself (it would wait for itself forever).
            BaseException: whatever ``coroutine`` raised.
        """
        if self.on_loop():
            coroutine.close()
            raise RuntimeError('a blocking MCP call cannot be made from the MCP background loop')
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop()).result()

    async def arun(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Await ``coroutine`` run on the background loop (directly when already on it)."""
        if self.on_loop():
            return await coroutine
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self._loop()))

    def stop(self) -> None:
        """Stop the loop thread (bounded wait); a later call starts a new one."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()
