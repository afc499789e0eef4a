"""Soak of the streaming core: ``partial_arguments`` after every fragment of randomised arguments.

``soak(seconds, seed)`` streams tool-call arguments of random shapes (long strings full of escapes,
surrogate pairs and multi-byte characters, long arrays, nesting up to 199 levels with content at
each level, many small objects, long keys, whitespace-heavy layouts, random nested values; sometimes
truncated, with an invalid tail, or with an error early on followed by the rest of the text) through the Rust ``StreamAggregator`` (openai-chat or anthropic
events, sometimes with a low ``max_depth``), in random fragmentations, and asks for the partial
arguments after every fragment. Each answer (value or error message) is compared with the one-shot
``parse_arguments(text_so_far, 'partial', max_depth=...)``. Every tenth stream is a big one (100-200
KB in 8-byte fragments): its asks are timed. Asks on texts over 20 KB are compared with the one-shot
answer at about 40 sampled fragments and the last one (one-shot parses of every prefix are quadratic). Figures:

- ``streams``, ``fragments``: streams run and fragments fed (= asks);
- ``asks_compared``: asks compared with the one-shot answer; ``errors_compared``: those whose
  one-shot answer is an error (compared by message);
- ``mismatches``: asks whose answer differs from the one-shot one (must be 0);
- ``big_streams`` and ``worst_ratio_vs_full_parse``: over the big streams, the time of all the
  asks of a stream divided by the time of one full parse of its final text (the worst stream;
  ``worst_shape`` names its shape as an index into ``SHAPES``). Each ask builds a fresh copy of the
  open path, so this ratio grows with the number of fragments for shapes whose open path is large.

Run from ``tests/reliability/soak.py`` (``make soak``). Never collected by pytest.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

import toolweave._core as rust
from toolweave.exceptions import ToolArgumentsError

CHARS = ['a', 'b', ' ', 'é', '😀', '中', '"', '\\', '/', '\n', '\t', '\x00', '\u2028', '\ue000', 'z']
TAILS = ['', '', '', ' ', 'x', '"', '\\', '\\u00', '\\ud83d', ',', '}', ']', '{', ', "k": tru', '1e', '-']
# Inserted at a random place of some texts: an error early in a long stream, followed by much more text.
CORRUPTIONS = ['x', '}', ']', ',', ':', '\\ud83dx', '\\ude00', '\\q', '01', '\x01', '"', '[' * 30]
START = {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 't', 'name': 'f'}}


def _text(rng: random.Random, size: int) -> str:
    return ''.join(rng.choice(CHARS) for _ in range(size))


def _scalar(rng: random.Random) -> Any:
    return rng.choice(
        [None, True, False, rng.randint(-(10**20), 10**20), rng.uniform(-1e6, 1e6), _text(rng, rng.randint(0, 6))]
    )


def _value(rng: random.Random, depth: int) -> Any:
    if depth <= 0 or rng.random() < 0.4:
        return _scalar(rng)
    if rng.random() < 0.5:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 4))]
    return {_text(rng, rng.randint(0, 4)): _value(rng, depth - 1) for _ in range(rng.randint(0, 4))}


def _long_string(rng: random.Random, size: int) -> Any:
    return {'text': _text(rng, size // 3), 'after': 1}


def _long_array(rng: random.Random, size: int) -> Any:
    return {'xs': [_scalar(rng) for _ in range(size // 10)]}


def _deep(rng: random.Random, size: int) -> Any:
    levels = rng.randint(1, 199)
    content = _text(rng, max(1, size // levels // 4))
    value: Any = content
    for level in range(levels):
        value = [level, content, value] if rng.random() < 0.3 else {'k': level, 's': content, 'c': value}
    return {'top': value}


def _objects(rng: random.Random, size: int) -> Any:
    return {
        'items': [{'id': i, 'name': _text(rng, 5), 'tags': ['a', _text(rng, 2)], 'ok': True} for i in range(size // 60)]
    }


def _long_key(rng: random.Random, size: int) -> Any:
    return {_text(rng, size // 3): 'v', 'b': [1]}


def _nested(rng: random.Random, size: int) -> Any:
    return {f'k{i}': _value(rng, 6) for i in range(max(1, size // 200))}


SHAPES: list[Callable[[random.Random, int], Any]] = [_long_string, _long_array, _deep, _objects, _long_key, _nested]


def _layout(rng: random.Random) -> dict[str, Any]:
    return rng.choice(
        [{}, {'ensure_ascii': False}, {'indent': rng.randint(0, 3)}, {'separators': (',', ':')}, {'indent': '\t' * 8}]
    )


def _event(fmt: str, fragment: str) -> bytes:
    if fmt == 'anthropic':
        data: dict[str, Any] = {
            'type': 'content_block_delta',
            'index': 0,
            'delta': {'type': 'input_json_delta', 'partial_json': fragment},
        }
    else:
        call = {'index': 0, 'id': 'c', 'type': 'function', 'function': {'name': 'f', 'arguments': fragment}}
        data = {'choices': [{'index': 0, 'delta': {'tool_calls': [call]}}]}
    return b'data: ' + json.dumps(data).encode() + b'\n\n'


def _outcome(call: Callable[[], dict[str, Any]]) -> Any:
    try:
        return call()
    except ToolArgumentsError as e:
        return ('error', str(e))


class _Stream:
    """One stream: its fragments, format and depth limit."""

    def __init__(self, rng: random.Random, size: int, fragment_size: int | None) -> None:
        self.shape = rng.randrange(len(SHAPES))
        text = json.dumps(SHAPES[self.shape](rng, size), **_layout(rng))
        if rng.random() < 0.2:
            text = text[: rng.randint(0, len(text))]
        if rng.random() < 0.1:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(CORRUPTIONS) + text[at:]
        text += rng.choice(TAILS)
        self.text = text
        self.fmt = rng.choice(['openai-chat', 'anthropic'])
        self.max_depth = rng.randint(2, 12) if self.fmt == 'anthropic' and rng.random() < 0.15 else 200
        cuts, i = [], 0
        while i < len(text):
            i += fragment_size or rng.choice([1, 2, 3, rng.randint(1, 40)])
            cuts.append(min(i, len(text)))
        self.cuts = cuts

    def aggregator(self) -> Any:
        agg = rust.StreamAggregator(self.fmt, max_depth=self.max_depth, max_total_bytes=None)
        if self.fmt == 'anthropic':
            agg.feed(
                b'data: ' + json.dumps({**START, 'content_block': {**START['content_block'], 'input': {}}}).encode()
            )
            agg.feed(b'\n\n')
        return agg

    def one_shot(self, end: int) -> Any:
        return _outcome(lambda: rust.parse_arguments(self.text[:end], 'partial', max_depth=self.max_depth))


def _run(stream: _Stream, checked: set[int] | None, figures: dict[str, Any]) -> float:
    """Feed ``stream``, asking after every fragment; compare the asks in ``checked`` (None: all). Seconds in asks."""
    agg = stream.aggregator()
    asking = 0.0
    start = 0
    for k, end in enumerate(stream.cuts):
        agg.feed(_event(stream.fmt, stream.text[start:end]))
        start = end
        began = time.perf_counter()
        got = _outcome(lambda: agg.partial_arguments(0))
        asking += time.perf_counter() - began
        figures['fragments'] += 1
        if checked is None or k in checked:
            expected = stream.one_shot(end)
            figures['asks_compared'] += 1
            figures['errors_compared'] += isinstance(expected, tuple)
            figures['mismatches'] += got != expected
    return asking


def _full_parse_seconds(text: str) -> float:
    best = float('inf')
    for _ in range(5):
        began = time.perf_counter()
        try:
            rust.parse_arguments(text, 'partial')
        except ToolArgumentsError:
            pass
        best = min(best, time.perf_counter() - began)
    return best


def soak(seconds: float, seed: int) -> dict[str, float | int]:
    """Stream random arguments for about ``seconds``; figures as in the module docstring."""
    rng = random.Random(seed)
    figures: dict[str, Any] = dict.fromkeys(
        ['streams', 'fragments', 'asks_compared', 'errors_compared', 'mismatches', 'big_streams'], 0
    )
    worst, worst_shape = 0.0, -1
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        big = figures['streams'] % 10 == 9
        stream = _Stream(rng, rng.randint(100_000, 200_000), 8) if big else _Stream(rng, rng.randint(10, 6_000), None)
        n = len(stream.cuts)
        # One-shot parses of every prefix are quadratic: long texts (deep indented layouts too) are sampled.
        checked = {*range(0, n, max(1, n // 40)), n - 1} if len(stream.text) > 20_000 else None
        asking = _run(stream, checked, figures)
        if big:
            ratio = asking / max(_full_parse_seconds(stream.text), 1e-6)
            figures['big_streams'] += 1
            if ratio > worst:
                worst, worst_shape = ratio, stream.shape
        figures['streams'] += 1
    figures['worst_ratio_vs_full_parse'] = round(worst, 1)
    figures['worst_shape'] = worst_shape
    return figures
