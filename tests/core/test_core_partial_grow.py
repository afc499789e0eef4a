"""The string still being written in a live partial value: grown in place past 2048 characters, never changed under a holder.

The Rust core grows a long open string in place through CPython's ``s += t`` fast path (a Python generator holds it
alone between pieces, ``rust/py/incremental.rs``); shorter strings grow by a copy. These tests cross that threshold
with pieces that widen the string's kind (ASCII, Latin-1, BMP, astral) and check, after every fragment, the value
against the one-shot ``parse_arguments(text, 'partial')``, and that a string or snapshot the caller kept never
changes, for both backends.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from support.core_fixtures import sse_from_payloads

TEXT = json.dumps(
    {'a': 'x' * 2100 + 'é' * 700 + 'Ω' * 700 + '😀' * 700 + 'end', 'b': ['y' * 3000, 'z'], 'c': 1},
    ensure_ascii=False,
)


def cuts(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize('size', [7, 64, 1000])
def test_live_value_equals_the_one_shot_value_while_kept_strings_stay(core: SimpleNamespace, size: int) -> None:
    parser = core.PartialArguments()
    text = ''
    kept: list[tuple[str, bytes]] = []  # (a string taken from the live value, a copy of its value then)
    value: dict[str, Any] = {}
    for k, fragment in enumerate(cuts(TEXT, size)):
        text += fragment
        value = parser.feed(fragment)
        assert value == core.parse_arguments(text, 'partial'), text[-40:]
        if k % max(1, 200 // size) == 0 and isinstance(value.get('a'), str):
            kept.append((value['a'], value['a'].encode()))
    assert value == json.loads(TEXT)
    assert len(kept) > 3
    for string, then in kept:
        assert string.encode() == then


def test_snapshots_never_change_while_the_string_grows(core: SimpleNamespace) -> None:
    agg = core.StreamAggregator('openai-chat')
    text = ''
    snapshots: list[tuple[dict[str, Any], str]] = []
    for fragment in cuts(TEXT, 50):
        text += fragment
        call = {'index': 0, 'id': 'c', 'function': {'arguments': fragment}}
        agg.feed(sse_from_payloads([{'choices': [{'index': 0, 'delta': {'tool_calls': [call]}}]}]))
        snapshot = agg.partial_arguments(0)
        assert snapshot == core.parse_arguments(text, 'partial')
        snapshots.append((snapshot, json.dumps(snapshot)))
        live = agg.partial_arguments(0, live=True)
        assert live == snapshot
    assert len(snapshots) == len(cuts(TEXT, 50))
    for snapshot, then in snapshots:
        assert json.dumps(snapshot) == then
