"""Partial arguments after every fragment of a whole stream, against one full parse; writes benches/results/partial.md.

Cases: the 359-fragment, 1.9 KB argument of ``benches/_streams.partial_fragments``, and a 200 KB argument of each
shape (a long ASCII string, a long string of non-ASCII characters and emoji, a long array of small numbers, 150 levels
of objects with content at each level, many small objects) cut into 8-character fragments.

Columns (times are medians of ``ROUNDS`` interleaved rounds; full parses the best of 20):

- ``feeds``: ``PartialArguments().feed(fragment)`` for every fragment, the live value after each (the Rust core);
- ``ratio``: that time / one full parse of the final text (``parse_arguments(text)``, same implementation);
- ``fixed``: the fixed cost of the same number of calls, ``feed('')`` on a parser that gets no text, / one full
  parse: the floor of any API that hands over one fragment per call;
- ``net``: (feeds - fixed) / one full parse, the parsing work itself;
- ``agg live``: a ``StreamAggregator`` fed the fragments as openai-chat events, asking
  ``partial_arguments(0, live=True)`` after each, minus the same feeding without asks, / one full parse;
- ``twin``: the pure-Python twin's feeds / its own full parse. It re-parses the whole text per fragment (quadratic):
  its run stops after ``TWIN_BUDGET`` seconds and its ratio is then a lower bound, with the ratio extrapolated to the
  whole stream (time x (fragments / done)^2).

Nothing here asserts a timing.
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
from _streams import partial_fragments

RESULTS = Path(__file__).parent / 'results'
SIZE = 200_000
FRAGMENT = 8
ROUNDS = 5
TWIN_BUDGET = 15.0


def _deep() -> dict[str, Any]:
    value: Any = 'end'
    for level in range(150):
        value = {'k': level, 's': 'y' * (SIZE // 150 - 30), 'c': value}
    return {'top': value}


def _cut(doc: dict[str, Any]) -> list[str]:
    text = json.dumps(doc)
    return [text[i : i + FRAGMENT] for i in range(0, len(text), FRAGMENT)]


CASES: dict[str, Callable[[], list[str]]] = {
    '1.9 KB, 359 fragments': partial_fragments,
    'long string': lambda: _cut({'text': 'abcdefgh' * (SIZE // 8)}),
    'unicode string': lambda: _cut({'text': 'abcdéfgh😀' * (SIZE // 30)}),
    'long array': lambda: _cut({'xs': list(range(SIZE // 7))}),
    'deep nesting (150 levels)': lambda: _cut(_deep()),
    'mixed objects': lambda: _cut(
        {
            'items': [
                {'id': i, 'name': f'item {i} é', 'tags': ['a', 'b'], 'ok': True, 'p': 1.5} for i in range(SIZE // 90)
            ]
        }
    ),
}


def feeds(core: Any, fragments: list[str], budget: float | None = None) -> tuple[float, int, Any]:
    """Seconds to feed every fragment, how many were fed before ``budget`` ran out, and the last value."""
    parser = core.PartialArguments()
    feed = parser.feed
    value = None
    start = time.perf_counter()
    for k, fragment in enumerate(fragments):
        value = feed(fragment)
        if budget is not None and k % 64 == 0 and time.perf_counter() - start > budget:
            return time.perf_counter() - start, k + 1, value
    return time.perf_counter() - start, len(fragments), value


def fixed(fragments: list[str]) -> float:
    """Seconds for one ``feed('')`` per fragment on a parser that gets no text (the per-call floor)."""
    feed = rust.PartialArguments().feed
    feed('{"a": 1')
    start = time.perf_counter()
    for _ in fragments:
        feed('')
    return time.perf_counter() - start


def events(fragments: list[str]) -> list[bytes]:
    out = []
    for f in fragments:
        call = {'index': 0, 'id': 'c', 'function': {'arguments': f}}
        out.append(
            b'data: ' + json.dumps({'choices': [{'index': 0, 'delta': {'tool_calls': [call]}}]}).encode() + b'\n\n'
        )
    return out


def aggregator(feeds_: list[bytes], ask: bool) -> float:
    agg = rust.StreamAggregator('openai-chat', max_total_bytes=None)
    start = time.perf_counter()
    for event in feeds_:
        agg.feed(event)
        if ask:
            agg.partial_arguments(0, live=True)
    return time.perf_counter() - start


def full_parse(core: Any, text: str, number: int = 20) -> float:
    best = float('inf')
    for _ in range(number):
        start = time.perf_counter()
        core.parse_arguments(text)
        best = min(best, time.perf_counter() - start)
    return best


def measure(case: str) -> dict[str, Any]:
    fragments = CASES[case]()
    text = ''.join(fragments)
    sse = events(fragments)
    runs: dict[str, list[float]] = {'feeds': [], 'fixed': [], 'asks': [], 'agg': []}
    for _ in range(ROUNDS):
        elapsed, _, value = feeds(rust, fragments)
        runs['feeds'].append(elapsed)
        runs['fixed'].append(fixed(fragments))
        runs['asks'].append(aggregator(sse, True))
        runs['agg'].append(aggregator(sse, False))
    assert value == json.loads(text)
    m = {k: statistics.median(v) for k, v in runs.items()}
    parse = full_parse(rust, text)
    twin_time, done, twin_value = feeds(reference, fragments, TWIN_BUDGET)
    assert done < len(fragments) or twin_value == json.loads(text)
    twin_parse = full_parse(reference, text, 3)
    return {
        'case': case,
        'kb': len(text.encode()) / 1000,
        'fragments': len(fragments),
        'feeds': m['feeds'],
        'parse': parse,
        'ratio': m['feeds'] / parse,
        'fixed': m['fixed'] / parse,
        'net': (m['feeds'] - m['fixed']) / parse,
        'agg_live': (m['asks'] - m['agg']) / parse,
        'twin_ratio': twin_time / twin_parse,
        'twin_done': done,
        'twin_extrapolated': twin_time / twin_parse * (len(fragments) / done) ** 2,
    }


def render(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        '# Partial arguments after every fragment of a whole stream (live value), against one full parse',
        '',
        'One run of benches/test_bench_partial.py (see its docstring): 200 KB cases in 8-character fragments.',
        'ratio = all the feeds / one full parse of the final text (same implementation); fixed = the same number of',
        "`feed('')` calls (the per-call floor) / one full parse; net = ratio - fixed; agg live = the",
        '`StreamAggregator.partial_arguments(0, live=True)` asks alone / one full parse; twin = pure-Python twin.',
        '',
        '| case | KB | fragments | rust: feeds | rust: full parse | rust ratio | fixed | net | agg live | twin ratio |',
        '|---|---|---|---|---|---|---|---|---|---|',
    ]
    for r in rows:
        if r['twin_done'] < r['fragments']:
            twin = (
                f'>= {r["twin_ratio"]:.0f} (stopped after {r["twin_done"]:,} fragments; '
                f'about {r["twin_extrapolated"]:.0f} extrapolated)'
            )
        else:
            twin = f'{r["twin_ratio"]:.1f}'
        lines.append(
            f'| {r["case"]} | {r["kb"]:.1f} | {r["fragments"]:,} | {r["feeds"] * 1e3:.2f} ms | {r["parse"] * 1e3:.3f} ms '
            f'| {r["ratio"]:.1f} | {r["fixed"]:.1f} | {r["net"]:.1f} | {r["agg_live"]:.1f} | {twin} |'
        )
    return lines


@pytest.mark.timeout(1200)
def test_partial_arguments_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    lines = render([measure(case) for case in CASES])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / 'partial.md').write_text('\n'.join(lines) + '\n')
    with capsys.disabled():
        print('\n' + '\n'.join(lines))
