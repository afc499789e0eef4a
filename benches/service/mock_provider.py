"""A loopback OpenAI-compatible provider that replays a two-round tool run with realistic pacing.

Every ``POST /v1/chat/completions`` with ``stream: true`` is answered in the envelope of the recorded
gpt-4o stream ``tests/data/streams/001-openai-chat-parallel-empty-args.sse`` (its ``id``, ``model``,
``system_fingerprint``, ``obfuscation`` ... fields): a request without tool results gets three parallel
tool calls (``get_weather``, ``get_time``, ``get_population``, arguments in fragments); a request with
them gets an answer of ``ANSWER_TOKENS`` tokens. The first event waits ``ttft`` seconds; the others are
written in ticks of ``TICK`` seconds, each tick carrying the events due at ``tokens_per_second`` (one
write per event would make the mock, not the service, the bottleneck of a loaded run).

Run: ``python benches/service/mock_provider.py --tps 400 --ttft 0.2`` (prints its port, serves until
stdin closes).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'tests'))

from support.keepalive_server import Answer, KeepAliveServer

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--tps', type=float, default=400.0, help='events (tokens) per second; 0 = no pacing')
    parser.add_argument('--ttft', type=float, default=0.2, help='seconds before the first event')
    args = parser.parse_args()
    head = envelope()
    per_tick = max(1, round(args.tps * TICK)) if args.tps else 10**9
    rounds = {False: ticks(tool_round(head), per_tick), True: ticks(answer_round(head), per_tick)}
    gap = per_tick / args.tps if args.tps else 0.0

    def answer(path: str, body: bytes) -> Answer:
        has_results = b'"role":"tool"' in body.replace(b' ', b'')
        return Answer(rounds[has_results], first=args.ttft, gap=gap)

    with KeepAliveServer(answer) as server:
        print(server.port, flush=True)
        sys.stdin.read()


if __name__ == '__main__':
    main()
