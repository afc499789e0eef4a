"""Running one tool call with a timeout, on the event loop or in a worker thread (beyond Spring AI).

Why a module of its own: Spring runs a turn's calls one after another; Python peers (pydantic-ai,
the OpenAI Agents SDK) run them concurrently. We do too, and the delicate part is what happens to a
call that is cut short:

- an async tool runs on the caller's event loop; a timeout or the caller's cancellation cancels it;
- a sync tool runs in a worker thread (``toolweave-tool-*``, see :class:`ToolThreads`), with the
  caller's context variables (so its spans nest under the tool span). Python cannot stop a thread:
  on the caller's cancellation we wait for the thread to return before the cancellation goes on, so
  no tool is left running behind the caller (but never past the call's timeout); on a timeout the
  model gets its error text at once and the call is *abandoned*: its thread finishes in the
  background, no longer counted against the pool size, so hung tools never starve the calls that
  come after them (in any request of the process).

A tool's ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``,
``GeneratorExit``) propagates (DESIGN section 4), but never as the outcome of a future or a task:
asyncio throws a task's exception into the awaiting coroutine, and a thrown ``GeneratorExit`` *closes*
every coroutine it is awaiting (any ``finally: await ...`` then fails with "coroutine ignored
GeneratorExit"), while a ``KeyboardInterrupt`` in a task stops the event loop mid-step. So such an
exception crosses a future or task boundary inside a :class:`CarriedError` (:func:`carrying`,
:meth:`ToolThreads.submit`) and is raised again, as itself, by plain ``raise`` on the other side
(:func:`result_of`, the manager's task groups). ``CancelledError`` is left alone: it is asyncio's own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from toolweave.exceptions import ToolExecutionError
from toolweave.tools.callback import ToolCallback
from toolweave.tools.context import ToolContext
from toolweave.tools.schema import _is_async

__all__ = [
    'CarriedError',
    'ToolThreads',
    'abandoned_threads',
    'call_async',
    'call_blocking',
    'carrying',
    'executor',
    'result_of',
    'runs_in_thread',
    'timeout_error',
]

logger = logging.getLogger('toolweave.tools')
_POOL_SIZE = 32
_T = TypeVar('_T')


class CarriedError(Exception):
    """A tool's ``BaseException`` (not an ``Exception``, not ``CancelledError``) crossing a future or task.

    Attributes:
        error: The exception the tool raised, raised again by the receiving side.
    """

    def __init__(self, error: BaseException) -> None:
        super().__init__(f'{type(error).__name__} raised by a tool')
        self.error = error


def _carried(error: BaseException) -> BaseException:
    """``error`` as a future or task may hold it (see the module docstring)."""
    if isinstance(error, Exception | asyncio.CancelledError):
        return error
    return CarriedError(error)


def result_of(future: concurrent.futures.Future[_T], timeout: float | None = None) -> _T:
    """``future.result(timeout)`` with a carried exception raised as itself."""
    try:
        return future.result(timeout)
    except CarriedError as carried:
        error = carried.error
    raise error


async def carrying(awaitable: Awaitable[_T]) -> _T:
    """Await ``awaitable`` as the body of a task: a tool's ``BaseException`` leaves it as a :class:`CarriedError`."""
    try:
        return await awaitable
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as error:  # noqa: BLE001 - raised again, as itself, by the awaiting side
        raise CarriedError(error) from None


class _Job(concurrent.futures.Future[Any]):
    """One submitted call: the future its caller waits on, and what to run."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        super().__init__()
        self.fn = fn
        self.args = args
        self.holds_slot = False  # running and counted against the pool size
        self.abandoned = False  # running past its timeout, no longer counted


class ToolThreads:
    """The worker threads of sync tools: at most ``size`` calls run at once, abandoned calls not counted.

    A call abandoned after its timeout (:meth:`abandon`) keeps its thread until it returns, but gives
    its slot back at once: the next call starts on another thread, so tools that never return cost
    threads, never capacity. The count of abandoned calls still running is logged (logger
    ``toolweave.tools``, warning) when it reaches 1, 2, 4, 8, ... (counted again from 1 once every
    abandoned call has returned). Workers are daemon threads, so
    a tool that never returns does not keep the process from exiting; up to ``size`` idle workers
    wait for the next call.

    Args:
        size: Calls that may run at once (the rest wait, in submission order).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: deque[_Job] = deque()
        self._busy = 0  # jobs holding a slot
        self._idle = 0  # workers waiting on ``_wake``, not yet woken
        self._coming = 0  # workers started, woken or done with a job that have not looked at the queue yet
        self._abandoned = 0  # abandoned jobs still running
        self._next_warning = 1
        self._names = itertools.count()

    @property
    def abandoned(self) -> int:
        """Calls abandoned after their timeout whose thread has not returned yet."""
        with self._lock:
            return self._abandoned

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future[Any]:
        """Run ``fn(*args)`` in a worker thread; the future holds its result or exception.

        A ``BaseException`` that is not an ``Exception`` is held as a :class:`CarriedError`
        (:func:`result_of` raises the original).
        """
        job = _Job(fn, args)
        with self._lock:
            self._queue.append(job)
            starts = self._demand()
        self._start_workers(starts)
        return job

    def abandon(self, future: concurrent.futures.Future[Any], name: str) -> None:
        """Give up waiting for ``future`` (a call of tool ``name`` past its timeout).

        A call that has not started is cancelled; a running one keeps its thread and frees its slot.
        """
        if future.cancel() or not isinstance(future, _Job):
            return
        with self._lock:
            if not future.holds_slot:
                return  # finished meanwhile
            future.holds_slot, future.abandoned = False, True
            self._busy -= 1
            self._abandoned += 1
            count = self._abandoned
            warn = count >= self._next_warning
            if warn:
                self._next_warning = count * 2
            starts = self._demand()
        self._start_workers(starts)
        if warn:
            logger.warning(
                "Tool '%s' ran past its timeout; %d abandoned sync tool call(s) are still running in their threads "
                '(Python cannot stop a thread). New calls run on new threads.',
                name,
                count,
            )

    def _demand(self) -> int:
        """Wake idle workers for the jobs that can start now; how many new workers to start (lock held).

        Keeps ``coming >= min(queued jobs, free slots)``, so a job that can start never waits for a
        running one to finish (cancelled jobs still queued can only make a worker come for nothing).
        """
        starts = 0
        while len(self._queue) > self._coming and self._busy + self._coming < self.size:
            self._coming += 1
            if self._idle:
                self._idle -= 1
                self._wake.notify()
            else:
                starts += 1
        return starts

    def _start_workers(self, count: int) -> None:
        for started in range(count):
            name = f'toolweave-tool-{next(self._names)}'
            try:
                threading.Thread(target=self._work, name=name, daemon=True).start()
            except RuntimeError as error:  # the OS refuses more threads: queued jobs wait for a running worker
                with self._lock:
                    self._coming -= count - started
                logger.error('Cannot start a tool worker thread (%s); queued tool calls wait for a free worker.', error)
                return

    def _work(self) -> None:
        while (job := self._take()) is not None:
            try:
                result = job.fn(*job.args)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
                self._finish(job)
                job.set_exception(_carried(exc))
                del exc
            else:
                self._finish(job)
                job.set_result(result)
            del job

    def _take(self) -> _Job | None:
        """The next job this worker runs, or ``None`` when it should exit (``size`` workers are idle already)."""
        with self._lock:
            self._coming -= 1
            while True:
                while self._queue and self._busy < self.size:
                    job = self._queue.popleft()
                    if job.set_running_or_notify_cancel():
                        job.holds_slot = True
                        self._busy += 1
                        return job
                if self._idle >= self.size:
                    return None
                self._idle += 1
                self._wake.wait()
                self._coming -= 1  # ``_demand`` counted this worker as coming when it woke it

    def _finish(self, job: _Job) -> None:
        """Book a returned job; its worker comes back for the next one."""
        with self._lock:
            if job.holds_slot:
                job.holds_slot = False
                self._busy -= 1
            elif job.abandoned:
                self._abandoned -= 1
                if not self._abandoned:
                    self._next_warning = 1  # all returned: the next episode is logged from its start
            self._coming += 1
            starts = self._demand()
        self._start_workers(starts)


_threads = ToolThreads(_POOL_SIZE)


def executor() -> ToolThreads:
    """The shared worker threads of sync tools (32 calls at once, abandoned calls not counted)."""
    return _threads


def abandoned_threads() -> int:
    """Sync tool calls abandoned after their timeout whose thread is still running (process-wide)."""
    return _threads.abandoned


def runs_in_thread(callback: ToolCallback) -> bool:
    """Whether the manager runs ``callback.call`` in a worker thread (a sync Python function behind it).

    Callbacks that expose no ``function`` are awaited through their own ``acall``.
    """
    function = getattr(callback, 'function', None)
    return callable(function) and not _is_async(function)


def timeout_error(callback: ToolCallback, timeout: float) -> ToolExecutionError:
    """The error a timed-out call becomes; its text is what the model reads."""
    name = callback.tool_definition.name
    message = f"Tool '{name}' did not finish within {timeout:g} seconds and was abandoned."
    return ToolExecutionError(callback.tool_definition, TimeoutError(message), message)


def call_blocking(callback: ToolCallback, arguments: str, context: ToolContext | None, timeout: float | None) -> str:
    """``callback.call`` in the calling thread, or in a worker thread when a timeout must bound the wait.

    Raises:
        ToolExecutionError: the tool failed, or ran past ``timeout`` (cause ``TimeoutError``).
    """
    if timeout is None:
        return callback.call(arguments, context)
    future = _threads.submit(contextvars.copy_context().run, callback.call, arguments, context)
    try:
        result: str = result_of(future, timeout)
        return result
    except concurrent.futures.TimeoutError:
        _threads.abandon(future, callback.tool_definition.name)
        raise timeout_error(callback, timeout) from None


async def call_async(callback: ToolCallback, arguments: str, context: ToolContext | None, timeout: float | None) -> str:
    """Run one call from a coroutine: async tools on the loop, sync tools in a worker thread.

    Raises:
        ToolExecutionError: the tool failed, or ran past ``timeout`` (cause ``TimeoutError``).
        asyncio.CancelledError: the caller was cancelled (a sync tool's thread has returned by then).
    """
    try:
        if runs_in_thread(callback):
            return await _call_in_thread(callback, arguments, context, timeout)
        # ``wait_for`` may run the coroutine as a task of its own: its BaseExceptions travel carried
        result: str = await asyncio.wait_for(carrying(callback.acall(arguments, context)), timeout)
        return result
    except asyncio.TimeoutError:
        raise timeout_error(callback, timeout or 0.0) from None
    except CarriedError as carried:
        error = carried.error
    raise error


async def _call_in_thread(
    callback: ToolCallback, arguments: str, context: ToolContext | None, timeout: float | None
) -> str:
    """``callback.call`` on a worker thread, abandoned past ``timeout``.

    When the caller is cancelled, the thread is waited for, but never past the call's timeout: a call
    that outlives it is abandoned, as it would have been without the cancellation.
    """
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    future = _threads.submit(contextvars.copy_context().run, callback.call, arguments, context)
    waiter = asyncio.wrap_future(future)
    waiter.add_done_callback(_consume)
    try:
        result: str = await asyncio.wait_for(asyncio.shield(waiter), timeout)
        return result
    except asyncio.TimeoutError:
        _threads.abandon(future, callback.tool_definition.name)
        raise
    except asyncio.CancelledError:
        if not future.cancel() and not await _wait_quietly(waiter, deadline):
            _threads.abandon(future, callback.tool_definition.name)
        raise


async def _wait_quietly(waiter: asyncio.Future[Any], deadline: float | None) -> bool:
    """Wait for a worker thread to return until ``deadline`` (loop time), ignoring its outcome.

    Returns whether it returned (the caller is being cancelled; cancelling it again does not stop the wait).
    """
    loop = asyncio.get_running_loop()
    while not waiter.done():
        remaining = None if deadline is None else deadline - loop.time()
        if remaining is not None and remaining <= 0:
            return False
        try:
            await asyncio.wait_for(asyncio.shield(waiter), remaining)
        except asyncio.CancelledError:
            continue  # cancelled again while waiting: the thread cannot be stopped, only outlived
        except asyncio.TimeoutError:
            return False
        except Exception:  # noqa: BLE001 - the outcome of a call being cancelled is dropped on purpose
            return True
    return True


def _consume(waiter: asyncio.Future[Any]) -> None:
    """Mark a worker's outcome as retrieved (a timed-out call's late error is not a bug to report)."""
    if not waiter.cancelled():
        waiter.exception()
