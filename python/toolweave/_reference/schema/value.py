"""Twin of the JSON value conversion of ``rust/py/schema.rs``: the values the schema functions take, checked alike."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ['BEYOND_INT64', 'MAX_DEPTH']

MAX_DEPTH = 256


def _json_value(value: Any, what: str = 'schema') -> Any:
    """A plain-JSON deep copy (dicts, lists) of a whole ``what`` (schema, instance), checked as the Rust conversion.

    Raises:
        ValueError: nesting deeper than 256, NaN/infinity, an int outside the 64-bit range, or a string or key
            holding a lone surrogate (which UTF-8, so JSON text, cannot carry), named by its JSON pointer
            (``value_of`` in ``rust/py/schema.rs``).
        TypeError: a value is not JSON, or a key is not a ``str``.
    """
    try:
        return _copy(value, 0)
    except UnicodeEncodeError:
        found = _find_surrogate(value, [], 0)
        if found is None:
            raise
    raise ValueError(_surrogate_message(*found, what))  # outside the handler: nothing chained, as the core


def _surrogate_message(code: int, in_key: bool, path: list[str], what: str) -> str:
    place = f'a key of the {what} object' if in_key else f'the {what} string'
    return f'lone surrogate U+{code:04X} in {place} at JSON pointer "{"".join(path)}" (JSON text cannot carry it)'


def _lone_surrogate(text: str) -> int | None:
    """The first surrogate code point of ``text`` (every surrogate in a ``str`` is lone to UTF-8)."""
    return next((ord(c) for c in text if 0xD800 <= ord(c) <= 0xDFFF), None)


def _find_surrogate(value: Any, path: list[str], depth: int) -> tuple[int, bool, list[str]] | None:
    """The first lone surrogate in ``value`` in the conversion's order: code point, in a key?, pointer segments."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, str):
        code = _lone_surrogate(value)
        return None if code is None else (code, False, path)
    if isinstance(value, (list, tuple)):
        members: list[tuple[str | None, Any]] = [(None, v) for v in value]
    elif isinstance(value, Mapping):
        members = list(value.items())
    else:
        return None
    for i, (key, member) in enumerate(members):
        if key is not None:
            if not isinstance(key, str):
                return None
            code = _lone_surrogate(key)
            if code is not None:
                return code, True, path
        name = str(i) if key is None else key.replace('~', '~0').replace('/', '~1')
        found = _find_surrogate(member, [*path, f'/{name}'], depth + 1)
        if found is not None:
            return found
    return None


def _copy(value: Any, depth: int) -> Any:
    """:func:`_json_value`'s copy; a lone surrogate raises ``UnicodeEncodeError`` as the binding's UTF-8 conversion."""
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
        return [_copy(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f'JSON object keys must be str, not {type(k).__name__}')
            k.encode('utf-8')
            out[k] = _copy(v, depth + 1)
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
    out = _json_value(value, what)
    if not isinstance(out, dict):
        raise TypeError(f'{what} must be a mapping, not {type(value).__name__}')
    return out
