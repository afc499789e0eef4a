"""Benchmark helpers: realistic inputs and a perf_counter comparison printer (never asserts timings)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable

CALLS = [
    ('get_weather', {'city': 'San Francisco, CA', 'unit': 'celsius', 'days': 5, 'include': ['wind', 'humidity']}),
    (
        'search_flights',
        {'from': 'SFO', 'to': 'CDG', 'date': '2025-06-01', 'passengers': 2, 'cabin': 'economy', 'flexible': True},
    ),
    ('create_event', {'title': 'Team sync – Q3 planning ✓', 'start': '2025-06-02T09:30:00Z', 'minutes': 45}),
]


def openai_tool_stream(target_chunks: int = 600, seed: int = 7) -> tuple[bytes, list[bytes]]:
    """A gpt-4o style chat-completions SSE body with 3 tool calls split into about `target_chunks` chunks.

    Returns the body and the list of its `data:` JSON payloads.
    """
    rng = random.Random(seed)
    head = {
        'id': 'chatcmpl-C2QD1kGWsTW5OWiqAtOSFEAOfPfQH',
        'object': 'chat.completion.chunk',
        'created': 1754693439,
        'model': 'gpt-4o-2024-08-06',
        'service_tier': 'default',
        'system_fingerprint': 'fp_07871e2ad8',
        'usage': None,
    }

    def chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
        obf = ''.join(rng.choice('abcdefghijklmnopqrstuvwxyz0123456789') for _ in range(rng.randint(2, 12)))
        choice = {'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish}
        return {**head, 'choices': [choice], 'obfuscation': obf}

    payloads = [chunk({'role': 'assistant', 'content': None})]
    per_call = (target_chunks - 4) // len(CALLS) - 1
    for index, (name, args) in enumerate(CALLS):
        text = json.dumps(args, ensure_ascii=False)
        text = (text + ' ' * (per_call * 4))[: max(len(text), per_call * 4)]  # pad so every call has per_call pieces
        size = max(1, len(text) // per_call)
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        first = {'index': index, 'id': f'call_{index}_q2UyBRP7eXNTzAoR8lEhjc9Z', 'type': 'function'}
        payloads.append(chunk({'tool_calls': [{**first, 'function': {'name': name, 'arguments': ''}}]}))
        payloads += [chunk({'tool_calls': [{'index': index, 'function': {'arguments': p}}]}) for p in pieces]
    payloads.append(chunk({}, 'tool_calls'))
    usage = {
        'prompt_tokens': 364,
        'completion_tokens': 640,
        'total_tokens': 1004,
        'prompt_tokens_details': {'cached_tokens': 0, 'audio_tokens': 0},
        'completion_tokens_details': {'reasoning_tokens': 0, 'audio_tokens': 0},
    }
    payloads.append({**head, 'choices': [], 'usage': usage, 'obfuscation': 'F1wZCrV0lEsbu'})
    raw = [json.dumps(p, ensure_ascii=False, separators=(',', ':')).encode() for p in payloads]
    body = b''.join(b'data: ' + r + b'\n\n' for r in raw) + b'data: [DONE]\n\n'
    return body, raw


def best_of(fn: Callable[[], object], repeat: int = 7, number: int = 20) -> float:
    """Best mean time per call in seconds over `repeat` rounds of `number` calls."""
    best = float('inf')
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def interleaved(cases: dict[str, Callable[[], object]], budget: float = 0.5, repeat: int = 7) -> dict[str, float]:
    """Median seconds per call of every case, measured in interleaved rounds (one round of every case, then the next).

    ``number`` calls per round are sized from a warm-up so one round of one case takes about
    ``budget / repeat`` seconds; the rows of a group so see the same machine load. Times are CPU time of
    this process (``time.process_time``): other processes competing for the 2 cores do not inflate them.
    The garbage collector is off while timing (collected before), as for every row alike.
    """
    import gc
    import statistics

    number: dict[str, int] = {}
    for name, fn in cases.items():
        start = time.process_time()
        fn()
        number[name] = max(1, int(budget / repeat / max(time.process_time() - start, 1e-7)))
    rounds: dict[str, list[float]] = {name: [] for name in cases}
    gc.collect()
    gc.disable()  # a collection triggered by one row's garbage would be charged to whichever row runs then
    try:
        for _ in range(repeat):
            for name, fn in cases.items():
                start = time.process_time()
                for _ in range(number[name]):
                    fn()
                rounds[name].append((time.process_time() - start) / number[name])
    finally:
        gc.enable()
    return {name: statistics.median(times) for name, times in rounds.items()}
