"""Fixtures for the Rust core tests (``tests/core/``), imported by ``tests/conftest.py``.

``core`` runs a test once against the Rust extension and once against the pure-Python twin.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import toolweave._core as rust_core
import toolweave._reference as reference_core

DATA = Path(__file__).parents[1] / 'data'
STREAMS = DATA / 'streams'
CASES = DATA / 'cases'

IMPLEMENTATIONS = {
    'rust': SimpleNamespace(
        name='rust',
        StreamAggregator=rust_core.StreamAggregator,
        parse_arguments=rust_core.parse_arguments,
        PartialArguments=rust_core.PartialArguments,
        UsageAccumulator=rust_core.UsageAccumulator,
        SchemaValidator=rust_core.SchemaValidator,
        hoist_defs_to_root=rust_core.hoist_defs_to_root,
        forbid_additional_properties=rust_core.forbid_additional_properties,
        upper_case_type_values=rust_core.upper_case_type_values,
        to_dialect=rust_core.to_dialect,
    ),
    'reference': SimpleNamespace(
        name='reference',
        StreamAggregator=reference_core.StreamAggregator,
        parse_arguments=reference_core.parse_arguments,
        PartialArguments=reference_core.PartialArguments,
        UsageAccumulator=reference_core.UsageAccumulator,
        SchemaValidator=reference_core.SchemaValidator,
        hoist_defs_to_root=reference_core.hoist_defs_to_root,
        forbid_additional_properties=reference_core.forbid_additional_properties,
        upper_case_type_values=reference_core.upper_case_type_values,
        to_dialect=reference_core.to_dialect,
    ),
}


@pytest.fixture(params=['rust', 'reference'])
def core(request: pytest.FixtureRequest) -> SimpleNamespace:
    """The core API (StreamAggregator, parse_arguments, UsageAccumulator, schema functions) of one implementation."""
    return IMPLEMENTATIONS[request.param]


def load_case(name: str) -> dict[str, Any]:
    """A corpus case from tests/data/cases by file-name prefix (e.g. 'B01')."""
    (path,) = CASES.glob(f'{name}-*.json')
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def sse_from_payloads(payloads: list[Any], *, done: bool = False) -> bytes:
    """Wrap JSON payloads as an SSE body (the .jsonl corpus files and the cases store payloads)."""
    body = b''.join(b'data: ' + json.dumps(p).encode() + b'\n\n' for p in payloads)
    return body + (b'data: [DONE]\n\n' if done else b'')


_FORMAT_PREFIXES = {'anthropic': 'anthropic', 'gemini': 'gemini', 'openai-responses': 'openai-responses'}


def stream_format(expected: dict[str, Any]) -> str:
    """The ``StreamAggregator`` format of a corpus stream, from its expected ``format`` label."""
    label = expected.get('format', 'openai-chat')
    return next((fmt for prefix, fmt in _FORMAT_PREFIXES.items() if label.startswith(prefix)), 'openai-chat')


def corpus_streams(format: str | None = 'openai-chat') -> list[str]:
    """Names (without extension) of the corpus streams of ``format`` (all of them for ``None``)."""
    names = sorted(p.name.removesuffix('.expected.json') for p in STREAMS.glob('*.expected.json'))
    if format is None:
        return names
    return [n for n in names if stream_format(json.loads((STREAMS / f'{n}.expected.json').read_text())) == format]


def load_stream(name: str) -> tuple[bytes, dict[str, Any]]:
    """The raw SSE body of a corpus stream (``.jsonl`` ones wrapped as SSE) and its expected result."""
    expected = json.loads((STREAMS / f'{name}.expected.json').read_text())
    sse = STREAMS / f'{name}.sse'
    if sse.exists():
        return sse.read_bytes(), expected
    lines = (STREAMS / f'{name}.jsonl').read_bytes().splitlines()
    return b''.join(b'data: ' + line + b'\n\n' for line in lines if line.strip()), expected
