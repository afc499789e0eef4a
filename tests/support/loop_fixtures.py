"""The shared loop fixture: run one request through ``call()``, ``acall()`` or ``stream()`` and compare alike.

``run_loop`` is parametrised over the three paths; a test written once runs in all three. Each run
gives a :class:`LoopResult` with what the caller sees in that path (the final response, the text,
the usage summed over rounds, the streamed chunks) and, on request, the run events.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from toolweave.chat import ChatResponse, Usage
from toolweave.client import ChatClientRequestSpec
from toolweave.events import ON_EVENT_CONTEXT_KEY, RunEvent

MODES = ('call', 'acall', 'stream')


@dataclass
class LoopResult:
    """What one run gave its caller.

    Attributes:
        mode: ``'call'``, ``'acall'`` or ``'stream'``.
        response: The final response (``stream``: the last chunk that has generations).
        text: The answer text (``stream``: the streamed pieces joined).
        usage: The usage the caller sees for the whole run (``stream``: the last chunk carrying usage).
        chunks: Every streamed chunk (``call``/``acall``: the response alone).
        events: The run events, when asked for.
    """

    mode: str
    response: ChatResponse
    text: str
    usage: Usage | None
    chunks: list[ChatResponse]
    events: list[RunEvent] = field(default_factory=list)


def run_request(spec: ChatClientRequestSpec, mode: str, *, events: bool = False) -> LoopResult:
    """Run ``spec`` in ``mode``; with ``events`` the run's events are recorded (synchronously, as emitted)."""
    seen: list[RunEvent] = []
    if events:
        spec = spec.advisors(**{ON_EVENT_CONTEXT_KEY: seen.append})
    if mode in ('call', 'acall'):
        response = spec.call() if mode == 'call' else asyncio.run(spec.acall())
        chat = response.chat_response()
        assert chat is not None
        return LoopResult(mode, chat, response.content(), chat.usage, [chat], seen)
    assert mode == 'stream', mode

    async def collect() -> list[ChatResponse]:
        return [chunk async for chunk in spec.stream().chat_responses()]

    chunks = asyncio.run(collect())
    final = [c for c in chunks if c.generations][-1]
    usage = next((c.usage for c in reversed(chunks) if c.usage is not None), None)
    return LoopResult(mode, final, ''.join(c.text for c in chunks), usage, chunks, seen)


class LoopRunner:
    """``run_loop(spec)`` runs ``spec`` in this runner's mode; ``run_loop.mode`` names it."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self, spec: ChatClientRequestSpec, *, events: bool = False) -> LoopResult:
        return run_request(spec, self.mode, events=events)

    def __repr__(self) -> str:
        return f'LoopRunner({self.mode!r})'


@pytest.fixture(params=MODES)
def run_loop(request: Any) -> LoopRunner:
    """A runner for one of ``call``, ``acall``, ``stream`` (the test runs once per path)."""
    return LoopRunner(request.param)
