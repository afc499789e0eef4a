"""Numbers a tool accepts from the model: finite, and integers within the signed 64-bit range (beyond Spring AI).

Why: pydantic (lax mode) turns ``"nan"``/``"inf"`` strings, JSON's ``NaN``/``Infinity`` extensions and
overflowing literals (``1e400``) into non-finite floats, and accepts integers of any size. A NaN then
passes every comparison a tool makes to refuse a value (``if amount > 100: refuse``), and a
``2**64`` breaks the database column or native library it reaches. So every tool kind checks the
values it bound from the arguments: each ``float``/``Decimal``/``complex`` must be finite, each ``int``
(``bool`` and enum members aside) within ``[-2**63, 2**63 - 1]``; anything else is an invalid
argument, answered to the model like a schema failure. Only what the model sent is checked: a
parameter or field left to its default (``limit: float = math.inf``) is the developer's value.
"""

from __future__ import annotations

import dataclasses
import decimal
import enum
import math
from collections.abc import Iterator, Mapping
from typing import Any

import pydantic

__all__ = ['INT64_MAX', 'INT64_MIN', 'Location', 'bounded_integers', 'number_problems']

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NOT_FINITE = 'Input should be a finite number'
OUT_OF_RANGE = 'Input should be an integer between -2**63 and 2**63 - 1 (signed 64-bit)'

Location = tuple[Any, ...]
"""Keys and indices from the checked value down to the offending number."""

_SKIPPED = (bool, str, bytes, bytearray, enum.Enum)
_NUMBERS = (int, float, complex, decimal.Decimal)
_SEQUENCES = (list, tuple, set, frozenset)
_QUICK_DEPTH = 32


def number_problems(value: Any) -> list[tuple[Location, str]]:
    """``(location, reason)`` for each non-finite or out-of-range number inside ``value``, in document order.

    ``value`` is what an argument binding produced: dicts, lists, tuples, sets, pydantic models (only
    the fields the input set), dataclasses (fields equal to their default are skipped) and scalars;
    other objects are not looked into. Shared or cyclic containers are visited once.
    """
    if _surely_fine(value, 0):
        return []
    problems: list[tuple[Location, str]] = []
    seen: set[int] = set()
    stack: list[tuple[Location, Any]] = [((), value)]
    while stack:
        location, item = stack.pop()
        reason = _scalar_problem(item)
        if reason is not None:
            problems.append((location, reason))
        elif not isinstance(item, _SKIPPED + _NUMBERS) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(reversed([((*location, key), child) for key, child in _children(item)]))
    return problems


def _surely_fine(item: Any, depth: int) -> bool:
    """A fast pass over the usual shapes (JSON-like values of exact builtin types, not too deep).

    ``True``: nothing to report; ``False``: :func:`number_problems` looks closer.
    """
    kind = type(item)
    if kind is str or kind is bool or item is None:
        return True
    if kind is int:
        return bool(INT64_MIN <= item <= INT64_MAX)
    if kind is float:
        return math.isfinite(item)
    if depth > _QUICK_DEPTH:
        return False
    if kind is dict:
        for key, child in item.items():
            if type(key) is not str or not _surely_fine(child, depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        for child in item:
            if not _surely_fine(child, depth + 1):
                return False
        return True
    return False


def _scalar_problem(item: Any) -> str | None:
    if isinstance(item, _SKIPPED):
        return None
    if isinstance(item, int):
        return None if INT64_MIN <= item <= INT64_MAX else OUT_OF_RANGE
    if isinstance(item, float):
        return None if math.isfinite(item) else NOT_FINITE
    if isinstance(item, decimal.Decimal):
        return None if item.is_finite() else NOT_FINITE
    if isinstance(item, complex):
        return None if math.isfinite(item.real) and math.isfinite(item.imag) else NOT_FINITE
    return None


def _children(item: Any) -> Iterator[tuple[Any, Any]]:
    """``(key, child)`` pairs to look into; a mapping's keys are checked too (``dict[int, ...]`` keys)."""
    if isinstance(item, Mapping):
        for key, child in item.items():
            yield key, key
            yield key, child
    elif isinstance(item, _SEQUENCES):
        yield from enumerate(item)
    elif isinstance(item, pydantic.BaseModel):
        given = item.model_fields_set
        for name in type(item).model_fields:
            if name in given:
                yield name, getattr(item, name, None)
        yield from (item.__pydantic_extra__ or {}).items()
    elif dataclasses.is_dataclass(item) and not isinstance(item, type):
        for field in dataclasses.fields(item):
            child = getattr(item, field.name, None)
            if child is not field.default:
                yield field.name, child


_SCHEMA_KEYWORDS = frozenset(
    {'items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'}
    | {'unevaluatedItems', 'unevaluatedProperties', 'additionalItems'}
)
_SCHEMA_LISTS = frozenset({'allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'})
_SCHEMA_MAPS = frozenset({'properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'})


def bounded_integers(schema: Any) -> Any:
    """A copy of a JSON Schema where every ``"type": "integer"`` also has the signed 64-bit bounds.

    For validation only (the model still reads the schema as written): JSON Schema counts ``1e20``
    as an integer, and a raw-schema tool's ``dict`` would carry it as a float beyond any 64-bit
    column. Tighter ``minimum``/``maximum`` values are kept; values of ``enum``, ``const``,
    ``default`` and ``examples`` are data, not schemas, and are left as they are.
    """
    if not isinstance(schema, Mapping):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            result[key] = {name: bounded_integers(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            result[key] = [bounded_integers(sub) for sub in value]
        elif key in _SCHEMA_KEYWORDS:
            result[key] = bounded_integers(value)
        else:
            result[key] = value
    kind = result.get('type')
    if kind == 'integer' or (isinstance(kind, list) and 'integer' in kind and 'number' not in kind):
        result['minimum'] = _tighter(result.get('minimum'), INT64_MIN, max)
        result['maximum'] = _tighter(result.get('maximum'), INT64_MAX, min)
    return result


def _tighter(bound: Any, limit: int, pick: Any) -> Any:
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        return pick(bound, limit)
    return limit
