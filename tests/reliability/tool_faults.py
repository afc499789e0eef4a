"""Helpers for the tool-execution attacks (tests/reliability/test_tools_*.py and soak_tools.py).

``run(spec, mode)`` drives one ChatClient request through ``call()``, ``acall()`` or ``stream()`` with a
bound on the async paths, and returns the final text and the last chat response; ``calls(...)``
builds one model turn asking for many tool calls.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Iterable, Mapping
from typing import Any, TypeVar

from toolweave.chat import ChatResponse
from toolweave.providers import ScriptedChatModel

T = TypeVar('T')
MODES = ('call', 'acall', 'stream')
BOUND = 20.0  # seconds an async path may take before the test fails instead of hanging


def calls(pairs: Iterable[tuple[str, Mapping[str, Any] | str]]) -> ChatResponse:
    """One model turn asking for every ``(name, arguments)`` of ``pairs``, in order."""
    (first, *more) = list(pairs)
    return ScriptedChatModel.tool_call_response(first[0], first[1], more=more)


def run(spec: Any, mode: str, bound: float = BOUND) -> tuple[str, ChatResponse]:
    """Run a request spec in ``mode``; returns ``(text, last chat response)``.

    The async paths run under a ``bound`` (``asyncio.timeout``: no task of its own, so a tool's
    ``KeyboardInterrupt`` reaches the main task as it would in an application) and a hang fails the
    test with ``TimeoutError``.
    """
    if mode == 'call':
        response = spec.call()
        chat = response.chat_response()
        return response.content(), chat
    if mode == 'acall':

        async def answer() -> tuple[str, ChatResponse]:
            response = await bounded(spec.acall(), bound)
            return response.content(), response.chat_response()

        return asyncio.run(answer())

    async def collect() -> list[ChatResponse]:
        return [chunk async for chunk in spec.stream().chat_responses()]

    async def streamed() -> tuple[str, ChatResponse]:
        chunks = await bounded(collect(), bound)
        return ''.join(c.text or '' for c in chunks), chunks[-1]

    return asyncio.run(streamed())


async def bounded(awaitable: Awaitable[T], bound: float) -> T:
    """``await awaitable`` within ``bound`` seconds, in the calling task (``asyncio.timeout``; 3.10: ``wait_for``)."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(bound):
            return await awaitable
    return await asyncio.wait_for(awaitable, bound)


def wait_until(predicate: Any, seconds: float = 10.0) -> bool:
    """Poll ``predicate()`` until it is true or ``seconds`` pass; its last value."""
    done = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if predicate():
            return True
        done.wait(0.01)
    return bool(predicate())
