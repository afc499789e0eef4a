"""A tool's KeyboardInterrupt/SystemExit reaches the caller of every stream view, sync and async.

Sync views run the stream on a private event loop in a thread: a BaseException escaping a task there
used to stop that loop's thread ("Exception in thread toolweave-stream"), so ``events()`` ended as if
the run had finished and ``content()``/``collect()`` raised ``RuntimeError('Event loop is closed')``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from toolweave import ChatClient, tool
from toolweave.client import StreamResponse
from toolweave.providers import ScriptedChatModel


@tool
def interrupt() -> str:
    """Raises KeyboardInterrupt."""
    raise KeyboardInterrupt


@tool
def leave() -> str:
    """Raises SystemExit."""
    raise SystemExit(3)


def _stream(fn: Any) -> StreamResponse:
    name = fn.tool_definition.name if hasattr(fn, 'tool_definition') else fn.__name__
    model = ScriptedChatModel(
        [ScriptedChatModel.tool_call_response(name, {}), ScriptedChatModel.text_response('never')]
    )
    return ChatClient.create(model).prompt('go').tools(fn).stream()


def _sync_events(stream: StreamResponse) -> list[str]:
    return [event.kind for event in stream.events()]


def _sync_content(stream: StreamResponse) -> list[str]:
    return list(stream.content())


def _collect(stream: StreamResponse) -> str:
    return stream.collect()


def _async_events(stream: StreamResponse) -> list[str]:
    async def run() -> list[str]:
        return [event.kind async for event in stream.events()]

    return asyncio.run(run())


VIEWS: dict[str, Callable[[StreamResponse], object]] = {
    'sync events': _sync_events,
    'sync content': _sync_content,
    'collect': _collect,
    'async events': _async_events,
}


@pytest.mark.parametrize('view', list(VIEWS))
@pytest.mark.parametrize(('fn', 'expected'), [(interrupt, KeyboardInterrupt), (leave, SystemExit)])
def test_a_tools_base_exception_reaches_the_caller_of_every_view(
    view: str, fn: Any, expected: type[BaseException], monkeypatch: pytest.MonkeyPatch
) -> None:
    thread_errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, 'excepthook', lambda args: thread_errors.append(args.exc_value))
    with pytest.raises(expected):
        VIEWS[view](_stream(fn))
    assert thread_errors == []
    assert not [t for t in threading.enumerate() if t.name == 'toolweave-stream' and t.is_alive()]
