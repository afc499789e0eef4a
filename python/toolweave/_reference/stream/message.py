"""Twin of ``rust/stream/message.rs``: the aggregation state shared by the formats other than ``openai-chat``.

Values the core re-serialises (object arguments, Gemini args, usage objects, Anthropic blocks) hold
integers as signed 64-bit: larger ones become floats, and floats that overflow to infinity become
``None`` (JSON has no infinity; see :func:`norm`). An index is a JSON integer in ``0 .. 2**63-1``.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

__all__ = ['Message', 'compact', 'norm']

_I64_MAX = 2**63 - 1


def norm(value: Any) -> Any:
    """A deep copy of a parsed value as the Rust core holds re-serialised values (``serde_json``).

    Integers outside the signed 64-bit range become floats (``None`` when even a float overflows);
    infinite floats become ``None``; everything else is copied unchanged.
    """
    if type(value) is int and not -(2**63) <= value <= 2**63 - 1:
        try:
            return float(value)
        except OverflowError:
            return None
    if type(value) is float and math.isinf(value):
        return None
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [norm(v) for v in value]
    return value


def compact(value: Any) -> str:
    """Compact JSON text of a parsed value (no spaces; non-ASCII kept), as the Rust core writes it."""
    return orjson.dumps(norm(value)).decode()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if type(value) is int and 0 <= value <= _I64_MAX else None


class Message:
    """The aggregation state shared by the formats of this module."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.text: list[str] = []
        self.reasoning: list[str] | None = None
        self.calls: list[dict[str, Any]] = []
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.done = False
        self.blocks: list[dict[str, Any]] = []

    def set_id_model(self, id: Any, model: Any) -> None:
        """Fill ``id`` / ``model`` from the first non-empty string values."""
        if self.id is None:
            self.id = _str(id) or None
        if self.model is None:
            self.model = _str(model) or None

    def add_reasoning(self, part: str) -> None:
        """Append reasoning text (``reasoning`` becomes a list at the first part)."""
        if self.reasoning is None:
            self.reasoning = []
        self.reasoning.append(part)

    def new_call(self, id: str, name: str) -> dict[str, Any]:
        """Start a tool call at the next position; returns its mutable record."""
        call: dict[str, Any] = {
            'index': len(self.calls),
            'id': id,
            'name': name,
            'arguments': [],
            'final': None,
            'extra': {},
        }
        self.calls.append(call)
        return call

    def tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls as result dicts (whole arguments win over the fragments)."""
        out = []
        for c in self.calls:
            arguments = c['final'] if c['final'] is not None else ''.join(c['arguments'])
            d = {'index': c['index'], 'id': c['id'], 'type': 'function', 'name': c['name'], 'arguments': arguments}
            d.update(c['extra'])
            out.append(d)
        return out
