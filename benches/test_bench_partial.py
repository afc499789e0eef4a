"""``partial_arguments`` asked after every 8-character fragment of a 200 KB argument; writes benches/results/partial.md.

For each shape (a long ASCII string, a long string of ``\\u00e9`` escapes and surrogate pairs, a long array of small
numbers, 150 levels of objects with content at each level, many small objects) the row gives the time of all the asks
of one stream (feed + ask after every fragment, minus feed alone; median of interleaved rounds) divided by the time of
one full parse of the final text (``parse_arguments``, best of 20), for the Rust core and the pure-Python twin. The
twin re-parses the text at every ask (quadratic): its run stops after ``TWIN_BUDGET`` seconds and its ratio is then a
lower bound, with the ratio extrapolated to the whole stream (its cost per ask grows with the prefix: time x (asks /
done)^2).

Each result is a fresh value (earlier results never change), so each ask copies the open path: the string still open
(one ``str``) and the containers still open (one ``list``/``dict`` of references each). The ``floor`` column is that
copy alone, done in Python (a slice of the open string or list per ask), over one full parse: no implementation of the
current contract goes below it. Nothing here asserts a timing.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import toolweave._core as rust
import toolweave._reference as reference

RESULTS = Path(__file__).parent / 'results'
SIZE = 200_000
FRAGMENT = 8
ROUNDS = 3
TWIN_BUDGET = 15.0


def _deep() -> dict[str, Any]:
    value: Any = 'end'
    for level in range(150):
        value = {'k': level, 's': 'y' * (SIZE // 150 - 30), 'c': value}
    return {'top': value}


SHAPES: dict[str, Callable[[], dict[str, Any]]] = {
    'long string': lambda: {'text': 'abcdefgh' * (SIZE // 8)},
    'unicode string': lambda: {'text': 'abcdéfgh😀' * (SIZE // 30)},
    'long array': lambda: {'xs': list(range(SIZE // 7))},
    'deep nesting (150 levels)': _deep,
    'mixed objects': lambda: {
        'items': [{'id': i, 'name': f'item {i} é', 'tags': ['a', 'b'], 'ok': True, 'p': 1.5} for i in range(SIZE // 90)]
    },
}


def events(text: str) -> list[bytes]:
    out = []
    for i in range(0, len(text), FRAGMENT):
        call = {'index': 0, 'id': 'c', 'function': {'arguments': text[i : i + FRAGMENT]}}
        out.append(
            b'data: ' + json.dumps({'choices': [{'index': 0, 'delta': {'tool_calls': [call]}}]}).encode() + b'\n\n'
        )
    return out


def stream(core: Any, feeds: list[bytes], ask: bool, budget: float | None = None) -> tuple[float, int]:
    """Seconds to feed ``feeds`` (asking after each if ``ask``), and how many were fed before ``budget`` ran out."""
    agg = core.StreamAggregator('openai-chat', max_total_bytes=None)
    start = time.perf_counter()
    for k, event in enumerate(feeds):
        agg.feed(event)
        if ask:
            agg.partial_arguments(0)
        if budget is not None and k % 64 == 0 and time.perf_counter() - start > budget:
            return time.perf_counter() - start, k + 1
    return time.perf_counter() - start, len(feeds)


def full_parse(core: Any, text: str, number: int = 20) -> float:
    best = float('inf')
    for _ in range(number):
        start = time.perf_counter()
        core.parse_arguments(text)
        best = min(best, time.perf_counter() - start)
    return best


def copy_floor(doc: dict[str, Any], asks: int) -> float | None:
    """Seconds to slice the open string or list once per ask (its length growing with the stream), or None."""
    (value,) = doc.values()
    if not isinstance(value, (str, list)):
        return None
    start = time.perf_counter()
    for j in range(1, asks + 1):
        value[: len(value) * j // asks]
    return time.perf_counter() - start


def rust_asks(feeds: list[bytes]) -> float:
    """Median over interleaved rounds of (feed + ask after every fragment) - (feed only)."""
    with_asks, feed_only = [], []
    for _ in range(ROUNDS):
        with_asks.append(stream(rust, feeds, True)[0])
        feed_only.append(stream(rust, feeds, False)[0])
    return statistics.median(with_asks) - statistics.median(feed_only)


def measure(shape: str) -> dict[str, Any]:
    doc = SHAPES[shape]()
    text = json.dumps(doc)
    feeds = events(text)
    row: dict[str, Any] = {'shape': shape, 'kb': len(text) / 1000, 'asks': len(feeds)}
    row['rust_asks'] = rust_asks(feeds)
    row['rust_parse'] = full_parse(rust, text)
    floor = copy_floor(doc, len(feeds))
    row['floor'] = None if floor is None else floor / row['rust_parse']
    twin_time, done = stream(reference, feeds, True, TWIN_BUDGET)
    row['twin_parse'] = full_parse(reference, text, 3)
    row['twin_ratio'] = twin_time / row['twin_parse']
    row['twin_done'] = done
    row['twin_extrapolated'] = row['twin_ratio'] * (len(feeds) / done) ** 2
    return row


def render(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        f'# partial_arguments after every {FRAGMENT}-character fragment of a {SIZE // 1000} KB argument',
        '',
        'ratio = time of all the asks of one stream / time of one full parse of the final text (same implementation).',
        'floor = one slice of the open string or list per ask, in Python, / one Rust full parse.',
        '',
        '| shape | KB | asks | rust: asks | rust: full parse | rust ratio | floor | twin ratio |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for r in rows:
        floor = '-' if r['floor'] is None else f'{r["floor"]:.0f}'
        if r['twin_done'] < r['asks']:
            twin = (
                f'>= {r["twin_ratio"]:.0f} (stopped after {r["twin_done"]:,} asks; '
                f'about {r["twin_extrapolated"]:.0f} extrapolated)'
            )
        else:
            twin = f'{r["twin_ratio"]:.0f}'
        lines.append(
            f'| {r["shape"]} | {r["kb"]:.0f} | {r["asks"]:,} | {r["rust_asks"]:.3f} s | {r["rust_parse"] * 1e3:.3f} ms '
            f'| {r["rust_asks"] / r["rust_parse"]:.0f} | {floor} | {twin} |'
        )
    return lines


@pytest.mark.timeout(900)
def test_partial_arguments_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    lines = render([measure(shape) for shape in SHAPES])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / 'partial.md').write_text('\n'.join(lines) + '\n')
    with capsys.disabled():
        print('\n' + '\n'.join(lines))
