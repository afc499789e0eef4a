"""Running one tool call with a timeout, on the event loop or in a worker thread (beyond Spring AI).

Why a module of its own: Spring runs a turn's calls one after another; Python peers (pydantic-ai,
the OpenAI Agents SDK) run them concurrently. We do too, and the delicate part is what happens to a
call that is cut short:

- an async tool runs on the caller's event loop; a timeout or the caller's cancellation cancels it;
- a sync tool runs in a worker thread of a shared pool (``toolweave-tool-*``), with the caller's
  context variables (so its spans nest under the tool span). Python cannot stop a thread: on the
  caller's cancellation we wait for the thread to return before the cancellation goes on, so no tool
  is left running behind the caller; on a timeout the model gets its error text at once and the
  thread finishes in the background (it is not waited for: bounding the wait is the point of a timeout).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import threading
from typing import Any

from toolweave.exceptions import ToolExecutionError
from toolweave.tools.callback import ToolCallback
from toolweave.tools.context import ToolContext

__all__ = ['call_async', 'call_blocking', 'executor', 'runs_in_thread', 'timeout_error']

_POOL_SIZE = 32
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def executor() -> concurrent.futures.ThreadPoolExecutor:
    """The shared pool for sync tools (32 threads named ``toolweave-tool-*``, created on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(_POOL_SIZE, thread_name_prefix='toolweave-tool')
        return _pool


def runs_in_thread(callback: ToolCallback) -> bool:
    """Whether the manager runs ``callback.call`` in a worker thread (a sync Python function behind it).

    Callbacks that expose no ``function`` are awaited through their own ``acall``.
    """
    function = getattr(callback, 'function', None)
    return callable(function) and not inspect.iscoroutinefunction(function)


def timeout_error(callback: ToolCallback, timeout: float) -> ToolExecutionError:
    """The error a timed-out call becomes; its text is what the model reads."""
    name = callback.tool_definition.name
    message = f"Tool '{name}' did not finish within {timeout:g} seconds and was abandoned."
    return ToolExecutionError(callback.tool_definition, TimeoutError(message), message)


def call_blocking(callback: ToolCallback, arguments: str, context: ToolContext, timeout: float | None) -> str:
    """``callback.call`` in the calling thread, or in a worker thread when a timeout must bound the wait.

    Raises:
        ToolExecutionError: the tool failed, or ran past ``timeout`` (cause ``TimeoutError``).
    """
    if timeout is None:
        return callback.call(arguments, context)
    future = executor().submit(contextvars.copy_context().run, callback.call, arguments, context)
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise timeout_error(callback, timeout) from None


async def call_async(callback: ToolCallback, arguments: str, context: ToolContext, timeout: float | None) -> str:
    """Run one call from a coroutine: async tools on the loop, sync tools in a worker thread.

    Raises:
        ToolExecutionError: the tool failed, or ran past ``timeout`` (cause ``TimeoutError``).
        asyncio.CancelledError: the caller was cancelled (a sync tool's thread has returned by then).
    """
    if not runs_in_thread(callback):
        try:
            return await asyncio.wait_for(callback.acall(arguments, context), timeout)
        except asyncio.TimeoutError:
            raise timeout_error(callback, timeout or 0.0) from None
    future = executor().submit(contextvars.copy_context().run, callback.call, arguments, context)
    waiter = asyncio.wrap_future(future)
    waiter.add_done_callback(_consume)
    try:
        result: str = await asyncio.wait_for(asyncio.shield(waiter), timeout)
        return result
    except asyncio.TimeoutError:
        future.cancel()
        raise timeout_error(callback, timeout or 0.0) from None
    except asyncio.CancelledError:
        if not future.cancel():
            await _wait_quietly(waiter)
        raise


async def _wait_quietly(waiter: asyncio.Future[Any]) -> None:
    """Wait for a worker thread to return, ignoring its outcome (the caller is being cancelled)."""
    while not waiter.done():
        try:
            await asyncio.shield(waiter)
        except asyncio.CancelledError:
            continue  # cancelled again while waiting: the thread cannot be stopped, only outlived
        except Exception:  # noqa: BLE001 - the outcome of a call being cancelled is dropped on purpose
            return


def _consume(waiter: asyncio.Future[Any]) -> None:
    """Mark a worker's outcome as retrieved (a timed-out call's late error is not a bug to report)."""
    if not waiter.cancelled():
        waiter.exception()
