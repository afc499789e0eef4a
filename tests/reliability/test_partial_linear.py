"""``StreamAggregator.partial_arguments`` asked after every fragment: linear work for every shape.

The proof that the work is linear, without timing, is in the Rust unit tests (``cargo test``):
``rust/json/incremental.rs``, ``each_byte_is_scanned_and_decoded_once`` counts the bytes the scanner
examines and the bytes it hands over to be decoded, for 200 KB arguments of every shape (long string,
escapes and surrogate pairs, long array, 150 levels with content at each, many objects, a long key, long
whitespace) in 1, 8 and 64-byte fragments: at most ``n + 16`` per ask scanned, ``n + 8`` per ask
decoded, where re-parsing scanned ``n`` per ask.

Here, from Python:

- bounded-time guards: shapes that took 53 s and 20 s on the development machine before the
  incremental scanner (the open string re-scanned and re-decoded from its start at every ask;
  one-shot parsing beyond 64 levels) must finish within 15 s (1.5 s and 0.7 s now);
- completed members are shared between successive results, never rebuilt: no ask converts a
  completed value again.

Each ask still builds a fresh copy of the open path (the string still open, the containers still
open), which is the one cost per ask that grows with the text: see ``benches/test_bench_partial.py``.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
import toolweave._core as rust


def events(text: str, size: int) -> list[bytes]:
    """``text`` as openai-chat tool-call argument fragments of ``size`` characters, one SSE event each."""
    out = []
    for i in range(0, len(text), size):
        call = {'index': 0, 'id': 'c', 'function': {'arguments': text[i : i + size]}}
        out.append(
            b'data: ' + json.dumps({'choices': [{'index': 0, 'delta': {'tool_calls': [call]}}]}).encode() + b'\n\n'
        )
    return out


def ask_after_every_fragment(text: str, size: int = 8) -> list[dict[str, Any]]:
    """Feed ``text`` in ``size``-character fragments, asking after each; the results at 1/4, 1/2 and the end."""
    agg = rust.StreamAggregator('openai-chat', max_total_bytes=None)
    feeds = events(text, size)
    checkpoints = {len(feeds) // 4, len(feeds) // 2, len(feeds) - 1}
    kept = []
    for k, event in enumerate(feeds):
        agg.feed(event)
        result = agg.partial_arguments(0)
        if k in checkpoints:
            kept.append(result)
    return kept


def escaped_unicode_string() -> str:
    """About 400 KB: a string of ``\\u00e9`` escapes and ``\\ud83d\\ude00`` pairs (53 s before, in 8-byte fragments)."""
    return json.dumps({'text': 'abcdéfgh😀' * 16_000})


def string_deep_down() -> str:
    """About 250 KB: a string 100 levels deep, below alternating objects and arrays (20 s before)."""
    value: Any = 'abcdéfgh😀' * 10_000
    for level in range(100):
        value = {'level': level, 'c': value} if level % 2 else [level, value]
    return json.dumps({'top': value})


GUARDED = {'escaped unicode string': escaped_unicode_string, 'string 100 levels deep': string_deep_down}


@pytest.mark.timeout(15)
@pytest.mark.parametrize('shape', list(GUARDED))
def test_asking_after_every_8_byte_fragment_finishes_in_bounded_time(shape: str) -> None:
    text = GUARDED[shape]()
    kept = ask_after_every_fragment(text)
    assert kept[-1] == json.loads(text)
    cut = len(events(text, 8)) // 2 * 8 + 8  # the text when the middle result was asked
    assert kept[1] == rust.parse_arguments(text[:cut], 'partial')


def results_after(fragments: list[str]) -> list[dict[str, Any]]:
    agg = rust.StreamAggregator('openai-chat')
    out = []
    for f in fragments:
        agg.feed(events(f, len(f))[0])
        out.append(agg.partial_arguments(0))
    return out


@pytest.mark.parametrize(
    'doc',
    [
        {'xs': [f'item {i} é😀' for i in range(300)]},
        {'xs': [{'id': i, 'tags': ['a', str(i)]} for i in range(300)]},
        {'xs': [[i, [i, [i]]] for i in range(300)]},
    ],
    ids=['strings', 'objects', 'nested arrays'],
)
def test_completed_members_are_shared_between_results_not_rebuilt(doc: dict[str, Any]) -> None:
    text = json.dumps(doc)
    results = results_after([text[i : i + 7] for i in range(0, len(text), 7)])
    assert results[-1] == doc
    shared = 0
    for before, after in itertools.pairwise(results):
        done = before.get('xs', [])[:-1]  # the last member may have been in progress
        assert all(a is b for a, b in zip(done, after['xs'][: len(done)], strict=True))
        shared += len(done)
    assert shared > 300 * 100  # the check above covered most members many times
