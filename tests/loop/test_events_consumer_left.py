"""A run that fails after the ``events()`` consumer left logs no "Task exception was never retrieved".

The consumer took the first event and left (``break``, then ``aclose()`` or nothing, or a sync ``events()``
left after one event); the run then failed with nobody to raise its error to. The event queue's run task
kept that error unretrieved, and asyncio logged it at ERROR when the task was freed.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from toolweave import ChatClient
from toolweave.chat.response import ChatResponse
from toolweave.providers import ScriptedChatModel


class _Down(RuntimeError):
    pass


class _FailingModel:
    """Streams nothing: raises as the first round starts (after the ``round_started`` event)."""

    def call(self, prompt: Any) -> ChatResponse:
        raise _Down('down')

    async def acall(self, prompt: Any) -> ChatResponse:
        raise _Down('down')

    async def stream(self, prompt: Any) -> AsyncIterator[ChatResponse]:
        raise _Down('down')
        yield  # pragma: no cover - an async generator


def _never_retrieved(caplog: pytest.LogCaptureFixture) -> list[str]:
    gc.collect()
    return [r.getMessage() for r in caplog.records if 'never retrieved' in r.getMessage()]


@pytest.mark.parametrize('close', [True, False])
def test_async_consumer_left_then_run_failed(close: bool, caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        events = ChatClient.create(_FailingModel()).prompt('x').stream().events()
        async for event in events:
            assert event.kind == 'round_started'
            break
        await asyncio.sleep(0.05)  # the run fails meanwhile
        if close:
            await events.aclose()

    with caplog.at_level(logging.ERROR, logger='asyncio'):
        asyncio.run(main())
        assert _never_retrieved(caplog) == []


def test_sync_consumer_left_then_run_failed(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger='asyncio'):
        for event in ChatClient.create(_FailingModel()).prompt('x').stream().events():
            assert event.kind == 'round_started'
            break
        assert _never_retrieved(caplog) == []
    # the next request works
    model = ScriptedChatModel([ScriptedChatModel.text_response('fine')])
    assert ChatClient.create(model).prompt('x').stream().collect() == 'fine'
