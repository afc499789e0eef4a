"""A loopback OpenAI-compatible provider that replays a two-round tool run with realistic pacing.

Every ``POST /v1/chat/completions`` with ``stream: true`` is answered in the envelope of the recorded
gpt-4o stream ``tests/data/streams/001-openai-chat-parallel-empty-args.sse`` (its ``id``, ``model``,
``system_fingerprint``, ``obfuscation`` ... fields): a request without tool results gets three parallel
tool calls (``get_weather``, ``get_time``, ``get_population``, arguments in fragments); a request with
them gets an answer of ``ANSWER_TOKENS`` tokens. The first event waits ``ttft`` seconds; the others are
written in ticks of ``TICK`` seconds, each tick carrying the events due at ``tokens_per_second`` (as a
provider's network writes batch tokens; one write per event would make the mock, not the service, the
bottleneck of a loaded run).

Cheap by construction, so the service under test gets the cores: every answer is encoded once at start
(HTTP head, chunked framing and all), a raw ``asyncio.Protocol`` on uvloop parses only the request's
``Content-Length`` and body, and the pacing is ``call_later`` timers (no task per request).

Run: ``python benches/service/mock_provider.py --tps 400 --ttft 0.2`` (prints its port, serves until
stdin closes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections import deque
from pathlib import Path
from typing import Any

import uvloop

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / 'tests' / 'data' / 'streams' / '001-openai-chat-parallel-empty-args.sse'
ANSWER_TOKENS = 300
TICK = 0.025
CALLS = [('get_weather', 'Paris'), ('get_time', 'Tokyo'), ('get_population', 'Lima')]
WORDS = [
    'the',
    'weather',
    'in',
    'Paris',
    'is',
    'mild',
    'while',
    'Tokyo',
    'is',
    'ahead',
    'by',
    'eight',
    'hours',
    'and',
    'Lima',
    'has',
    'ten',
    'million',
    'people',
]


def envelope() -> dict[str, Any]:
    """The recorded stream's chunk fields, except ``choices``."""
    first = RECORDED.read_text().split('\n\n')[0].removeprefix('data: ')
    return {k: v for k, v in json.loads(first).items() if k != 'choices'}


def _event(head: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish}
    return b'data: ' + json.dumps({**head, 'choices': [choice]}, separators=(',', ':')).encode() + b'\n\n'


def tool_round(head: dict[str, Any]) -> list[bytes]:
    """Three parallel tool calls, each argument object in 4-character fragments."""
    events = [_event(head, {'role': 'assistant', 'content': None})]
    for index, (name, city) in enumerate(CALLS):
        first = {'index': index, 'id': f'call_{index}_q2UyBRP7eXNTzAoR8lEhjc9Z', 'type': 'function'}
        events.append(_event(head, {'tool_calls': [{**first, 'function': {'name': name, 'arguments': ''}}]}))
        text = json.dumps({'city': city})
        for i in range(0, len(text), 4):
            events.append(_event(head, {'tool_calls': [{'index': index, 'function': {'arguments': text[i : i + 4]}}]}))
    events.append(_event(head, {}, 'tool_calls'))
    return [*events, usage(head, 40), b'data: [DONE]\n\n']


def answer_round(head: dict[str, Any]) -> list[bytes]:
    """An answer of ANSWER_TOKENS tokens, one per event."""
    rng = random.Random(1)
    events = [_event(head, {'role': 'assistant', 'content': ''})]
    events += [_event(head, {'content': (' ' if i else '') + rng.choice(WORDS)}) for i in range(ANSWER_TOKENS)]
    events.append(_event(head, {}, 'stop'))
    return [*events, usage(head, ANSWER_TOKENS), b'data: [DONE]\n\n']


def usage(head: dict[str, Any], completion: int) -> bytes:
    counts = {'prompt_tokens': 120, 'completion_tokens': completion, 'total_tokens': 120 + completion}
    return b'data: ' + json.dumps({**head, 'choices': [], 'usage': counts}).encode() + b'\n\n'


def ticks(events: list[bytes], per_tick: int) -> list[bytes]:
    """The first event alone (time to first token), then ``per_tick`` events per write."""
    rest = events[1:]
    return [events[0], *(b''.join(rest[i : i + per_tick]) for i in range(0, len(rest), per_tick))]


def pacing(tokens_per_second: float, ttft: float) -> float:
    """Seconds the provider itself takes for one two-round run (the floor of a request's latency)."""
    head = envelope()
    gaps = len(tool_round(head)) - 1 + len(answer_round(head)) - 1
    return 2 * ttft + (gaps / tokens_per_second if tokens_per_second else 0.0)


def framed(pieces: list[bytes]) -> list[bytes]:
    """The writes of one answer: the HTTP head with the first piece, then each piece chunk-encoded."""
    chunks = [b'%x\r\n%s\r\n' % (len(piece), piece) for piece in pieces]
    chunks[-1] += b'0\r\n\r\n'
    head = b'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n'
    return [head + chunks[0], *chunks[1:]]


class Provider(asyncio.Protocol):
    """One keep-alive connection: answers each request with ``answers[has tool results]``, paced.

    ``ttft`` seconds before the first write, ``gap`` seconds between writes; requests that arrive
    while an answer is being written wait their turn (HTTP/1.1 order).
    """

    def __init__(self, answers: dict[bool, list[bytes]], ttft: float, gap: float) -> None:
        self.answers, self.ttft, self.gap = answers, ttft, gap
        self.buffer = b''
        self.waiting: deque[list[bytes]] = deque()
        self.writing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.WriteTransport = transport  # type: ignore[assignment]
        self.loop = asyncio.get_running_loop()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b'\r\n\r\n')) >= 0:
            head = self.buffer[:end].lower()
            at = head.find(b'content-length:')
            length = int(head[at + 15 :].split(b'\r\n', 1)[0]) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            self.waiting.append(self.answers[b'"role":"tool"' in body.replace(b' ', b'')])
            if not self.writing:
                self.writing = True
                self.loop.call_later(self.ttft, self.write, 0)

    def write(self, index: int) -> None:
        if self.transport.is_closing():
            return
        writes = self.waiting[0]
        self.transport.write(writes[index])
        if index + 1 < len(writes):
            self.loop.call_later(self.gap, self.write, index + 1)
            return
        self.waiting.popleft()
        self.writing = bool(self.waiting)
        if self.writing:
            self.loop.call_later(self.ttft, self.write, 0)


async def serve(answers: dict[bool, list[bytes]], ttft: float, gap: float) -> None:
    """Serve on a free 127.0.0.1 port (printed on stdout's first line) until stdin closes."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Provider(answers, ttft, gap), '127.0.0.1', 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--tps', type=float, default=400.0, help='events (tokens) per second; 0 = no pacing')
    parser.add_argument('--ttft', type=float, default=0.2, help='seconds before the first event')
    args = parser.parse_args()
    head = envelope()
    per_tick = max(1, round(args.tps * TICK)) if args.tps else 10**9
    answers = {False: framed(ticks(tool_round(head), per_tick)), True: framed(ticks(answer_round(head), per_tick))}
    uvloop.run(serve(answers, args.ttft, per_tick / args.tps if args.tps else 0.0))


if __name__ == '__main__':
    main()
