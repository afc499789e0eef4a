"""Twin of the JSON value conversion of ``rust/py/schema.rs``: the values the schema functions take, checked alike."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ['BEYOND_INT64', 'MAX_DEPTH']

MAX_DEPTH = 256


def _json_value(value: Any, depth: int = 0) -> Any:
    """A plain-JSON deep copy (dicts, lists), checked as the Rust conversion checks it."""
    if depth > MAX_DEPTH:
        raise ValueError(f'JSON value nested deeper than {MAX_DEPTH} levels')
    if isinstance(value, str):
        value.encode('utf-8')  # a lone surrogate: UnicodeEncodeError, as the binding's conversion to UTF-8
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**64:
            raise ValueError('integer out of the 64-bit range cannot be used in a JSON Schema value')
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError('NaN and infinity are not JSON values')
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f'JSON object keys must be str, not {type(k).__name__}')
            k.encode('utf-8')
            out[k] = _json_value(v, depth + 1)
        return out
    raise TypeError(f'{type(value).__name__} is not a JSON value (expected dict, list, str, int, float, bool or None)')


BEYOND_INT64 = 'integer out of the signed 64-bit range (int64=True)'


def _beyond_int64(value: Any) -> bool:
    """Whether a checked JSON value holds an integer above ``2**63 - 1`` (below ``-2**63`` was refused)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool) and item > 2**63 - 1:
            return True
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return False


def _object(value: Any, what: str) -> dict[str, Any]:
    out = _json_value(value)
    if not isinstance(out, dict):
        raise TypeError(f'{what} must be a mapping, not {type(value).__name__}')
    return out
