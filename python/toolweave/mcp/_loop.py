"""The MCP client's private event loop: sessions live on one background loop, callers use them from anywhere.

An MCP session (anyio task groups underneath) must be entered and left in one task of one loop, while
tools are called from blocking code, from ``acall()`` on the caller's loop and from ``stream()`` on the
stream's private loop. So every session runs on this loop (a :class:`_LoopThread`), and callers hand it
coroutines: :meth:`BackgroundLoop.run` blocks, :meth:`BackgroundLoop.arun` awaits (a cancelled caller
cancels the coroutine on the background loop).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ['BackgroundLoop']

_CLOSE_TIMEOUT = 30.0
"""Seconds :meth:`_LoopThread.stop` waits for the loop's thread."""


class _LoopThread:
    """A private event loop running in a daemon thread, in a copy of the creator's context variables."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._run,), name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                self.loop.close()

    def stop(self) -> None:
        """Stop the loop and wait (bounded) for its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(_CLOSE_TIMEOUT)


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
