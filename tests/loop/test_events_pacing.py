"""stream().events() pacing: text events go on in batches, at most a bounded number ahead of the consumer.

The run waits for the consumer after a chunk only while an event with a live value (a
``ToolCallArgumentsDelta``'s ``partial``) is unhandled, or ``_EVENTS_AHEAD`` events are; the live-partial
promise itself is tested in ``test_events.py::test_events_view_shows_each_partial_before_the_next_fragment``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from toolweave import ChatClient
from toolweave.chat import AssistantMessage, ChatResponse, Generation, Prompt
from toolweave.client import _EVENTS_AHEAD
from toolweave.events import TextDelta


class CountingModel:
    """Streams ``total`` one-word text chunks, counting how many it has sent."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.sent = 0

    def call(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - streaming only
        raise NotImplementedError

    async def acall(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - streaming only
        raise NotImplementedError

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        for _ in range(self.total):
            self.sent += 1
            yield ChatResponse((Generation(AssistantMessage('w ')),))
            await asyncio.sleep(0)  # a provider between reads: the run's task yields to the loop


def test_a_stalled_consumer_holds_the_run_at_the_bound_and_every_event_arrives_in_order() -> None:
    model = CountingModel(5 * _EVENTS_AHEAD)
    sent_when_resumed: list[int] = []
    texts: list[str] = []

    async def run() -> None:
        stream = ChatClient.create(model).prompt('go').stream()  # type: ignore[arg-type]
        async for event in stream.events():
            if isinstance(event, TextDelta):
                if not texts:
                    await asyncio.sleep(0.05)  # stalled on the first event: the run may go on, but only so far
                    sent_when_resumed.append(model.sent)
                texts.append(event.text)

    asyncio.run(run())
    assert texts == ['w '] * model.total
    # one event per chunk: the run went ahead, in batches, to the bound and not beyond (+1: the chunk in hand)
    assert 2 <= sent_when_resumed[0] <= _EVENTS_AHEAD + 1


def test_a_sync_consumer_gets_the_same_events() -> None:
    model = CountingModel(3 * _EVENTS_AHEAD)
    kinds = [event.kind for event in ChatClient.create(model).prompt('go').stream().events()]  # type: ignore[arg-type]
    assert kinds.count('text_delta') == model.total
    assert kinds[-1] == 'run_finished'
