"""Pure-Python twin of ``toolweave._core.UsageAccumulator``.

Numbers are summed key-wise, recursively through nested mappings (``prompt_tokens_details``); an
int plus a float gives a float. ``None`` leaves stay ``None`` until some round has a number there.
Strings keep the last value. A key holding a mapping in one round and a scalar in another, a bool,
a list or any other type, a non-string key, a key or string with a lone surrogate, an integer
outside 64 bits or mappings nested deeper than ``MAX_DEPTH`` (32) levels (the top-level mapping is
level 1; a self-referencing dict is caught this way) raise ``TypeError`` naming the key path; a
failed ``add`` changes nothing. A mapping whose ``items()`` repeats a key keeps the last value, as
a dict built from those items would. Subclasses of ``str``/``int``/``float`` count by their value,
whatever their methods do. The usage object is read completely before the total is touched, so
``items()`` of a custom mapping may itself call ``add`` (that round is counted first). Not
thread-safe: use one accumulator per conversation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ['MAX_DEPTH', 'UsageAccumulator']

MAX_DEPTH = 32

_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1


def _join(path: str, key: str) -> str:
    return f'{path}.{key}' if path else key


def _where(path: str) -> str:
    return f"'{path}'" if path else 'the top level'


def _convert_map(usage: Mapping[Any, Any], path: str, depth: int) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise TypeError(f"usage value at '{path}' nests mappings deeper than {MAX_DEPTH} levels")
    out: dict[str, Any] = {}
    for key, value in list(usage.items()):  # a snapshot, like the Rust core
        if not isinstance(key, str):
            raise TypeError(f'usage keys must be strings, got {type(key).__name__} at {_where(path)}')
        key = str.__str__(key)
        if not _encodable(key):
            raise TypeError(f'usage keys must be valid Unicode, got a lone surrogate at {_where(path)}')
        out[key] = _convert(value, _join(path, key), depth)
    return out


def _encodable(text: str) -> bool:
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return False
    return True


def _convert(value: Any, path: str, depth: int) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        raise _bad(value, path)
    if isinstance(value, int):
        number = int.__int__(value)
        if not _I64_MIN <= number <= _I64_MAX:
            raise TypeError(f"usage value at '{path}' is out of the 64-bit integer range")
        return number
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        text = str.__str__(value)
        if not _encodable(text):
            raise TypeError(f"usage value at '{path}' is a string with a lone surrogate")
        return text
    if isinstance(value, Mapping):
        return _convert_map(value, path, depth + 1)
    raise _bad(value, path)


def _bad(value: Any, path: str) -> TypeError:
    return TypeError(f"usage value at '{path}' must be a number, string, mapping or None, got {type(value).__name__}")


def _kind(value: Any) -> str:
    if value is None:
        return 'None'
    if isinstance(value, dict):
        return 'mapping'
    if isinstance(value, str):
        return 'string'
    return 'number'


def _merge_map(into: dict[str, Any], add: dict[str, Any], path: str) -> None:
    for key, value in add.items():
        into[key] = _merge(into.get(key), value, _join(path, key))


def _merge(old: Any, new: Any, path: str) -> Any:
    if new is None:
        return old
    if isinstance(new, dict):
        if old is None:
            old = {}
        elif not isinstance(old, dict):
            raise TypeError(f"usage value at '{path}' mixes a {_kind(old)} and a {_kind(new)} across rounds")
        _merge_map(old, new, path)
        return old
    if isinstance(old, dict):
        raise TypeError(f"usage value at '{path}' mixes a {_kind(old)} and a {_kind(new)} across rounds")
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        if isinstance(old, int) and isinstance(new, int):
            return old + new
        return float(old) + float(new)
    return new


class UsageAccumulator:
    """Sums usage objects over the rounds of a conversation (see the module docstring)."""

    def __init__(self) -> None:
        self._total: dict[str, Any] | None = None
        self._rounds = 0

    def add(self, usage: Mapping[str, Any] | None) -> None:
        """Add one round's usage; ``None`` is ignored."""
        if usage is None:
            return
        if not isinstance(usage, Mapping):
            raise TypeError(f'usage must be a mapping or None, got {type(usage).__name__}')
        converted = _convert_map(usage, '', 1)
        total = copy.deepcopy(self._total) if self._total is not None else {}
        _merge_map(total, converted, '')
        self._total = total
        self._rounds += 1

    def total(self) -> dict[str, Any] | None:
        """A copy of the running total; None before the first non-None round."""
        return copy.deepcopy(self._total)

    @property
    def rounds(self) -> int:
        """Number of non-None usages added."""
        return self._rounds

    def reset(self) -> None:
        """Forget everything."""
        self._total = None
        self._rounds = 0

    def __repr__(self) -> str:
        return f'UsageAccumulator(rounds={self._rounds})'
