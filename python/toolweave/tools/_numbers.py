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
import pydantic_core

from toolweave._native import numbers_fine

__all__ = [
    'BOUND_ERRORS',
    'INT64_MAX',
    'INT64_MIN',
    'Location',
    'bounded_integers',
    'checked_validator',
    'number_problems',
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NOT_FINITE = 'Input should be a finite number'
OUT_OF_RANGE = 'Input should be an integer between -2**63 and 2**63 - 1 (signed 64-bit)'

Location = tuple[Any, ...]
"""Keys and indices from the checked value down to the offending number."""

_SKIPPED = (bool, str, bytes, bytearray, enum.Enum)
_NUMBERS = (int, float, complex, decimal.Decimal)
_SEQUENCES = (list, tuple, set, frozenset)


def number_problems(value: Any) -> list[tuple[Location, str]]:
    """``(location, reason)`` for each non-finite or out-of-range number inside ``value``, in document order.

    ``value`` is what an argument binding produced: dicts, lists, tuples, sets, pydantic models (only
    the fields the input set), dataclasses (fields equal to their default are skipped) and scalars;
    other objects are not looked into. Shared or cyclic containers are visited once. The usual shapes
    (JSON-like values, enums, pydantic models) pass the core's quick check (``numbers_fine``) first.
    """
    if numbers_fine(value, pydantic.BaseModel, enum.Enum):
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


BOUND_ERRORS = frozenset({'finite_number', 'less_than_equal', 'greater_than_equal'})
"""pydantic error types the bounds of :func:`checked_validator` may raise (a tool's own ``le``/``ge`` too)."""
_LEAVES = frozenset(
    {'none', 'bool', 'str', 'bytes', 'date', 'time', 'datetime', 'timedelta', 'literal', 'enum', 'url'}
    | {'multi-host-url', 'uuid', 'definition-ref', 'missing-sentinel', 'ellipsis'}
)
"""Core schema types whose values hold no number the model chose (or only through their sub-schemas)."""
_WRAPPERS = frozenset(
    {'list', 'deque', 'tuple', 'set', 'frozenset', 'dict', 'ordered-dict', 'default', 'nullable', 'union'}
    | {'tagged-union', 'lax-or-strict', 'json-or-python', 'typed-dict', 'model-fields', 'dataclass-args'}
    | {'definitions', 'custom-error', 'typed-dict-field', 'model-field', 'dataclass-field'}
)
_SUB_SCHEMAS = (
    *('schema', 'items_schema', 'keys_schema', 'values_schema', 'lax_schema', 'strict_schema'),
    *('json_schema', 'python_schema', 'choices', 'fields', 'definitions'),
)
_UNTYPED_WITHOUT = {
    'list': 'items_schema',
    'deque': 'items_schema',
    'set': 'items_schema',
    'frozenset': 'items_schema',
    'dict': 'values_schema',
    'ordered-dict': 'values_schema',
}
"""Containers that hold raw JSON values when the named sub-schema is absent (``list``, ``dict``)."""


def checked_validator(adapter: pydantic.TypeAdapter[Any]) -> pydantic_core.SchemaValidator | None:
    """A validator of ``adapter``'s type that also refuses what :func:`number_problems` would report.

    The adapter's core schema, copied, with ``allow_inf_nan: false`` on every float and decimal and
    the signed 64-bit bounds on every int: a value it accepts needs no :func:`number_problems` walk.
    ``None`` when the schema holds something whose numbers a schema cannot bound: ``Any`` (or a
    container of untyped items), ``complex``, validator functions, models or dataclasses with their
    own ``__init__``/``__post_init__``, instance checks. Only for accepting: its errors are not the
    precise ones (callers take their usual path on failure).
    """
    try:
        schema = _checked(adapter.core_schema)
        return None if schema is None else pydantic_core.SchemaValidator(schema, adapter.core_schema.get('config'))
    except Exception:  # noqa: BLE001 - an unknown schema shape: the caller keeps the walk
        return None


def _checked(node: Any) -> Any:
    """A copy of the core schema ``node`` with the number bounds, ``None`` if it cannot be bounded."""
    if isinstance(node, str):  # a union choice's label, a dataclass's field name
        return node
    if isinstance(node, list | tuple):
        items = [_checked(item) for item in node]
        return None if any(item is None for item in items) else type(node)(items)
    if not isinstance(node, dict):
        return None
    kind = node.get('type')
    if kind is None:  # a name -> schema map (fields, tagged-union choices)
        values = {key: _checked(value) for key, value in node.items()}
        return None if any(value is None for value in values.values()) else values
    if kind == 'int':
        low, high = node.get('ge', INT64_MIN), node.get('le', INT64_MAX)
        return {**node, 'ge': max(low, INT64_MIN), 'le': min(high, INT64_MAX)}
    if kind in ('float', 'decimal'):
        return {**node, 'allow_inf_nan': False}
    if kind in _LEAVES:
        return node
    return _checked_container(node, kind)


def _checked_container(node: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """:func:`_checked` of a schema with sub-schemas: each bounded, ``None`` if one cannot be.

    A complete pydantic model or dataclass is validated by its class's own prebuilt validator
    (pydantic-core reuses it whatever the schema says), so its schema must need no bound at all.
    """
    if not _bounded_kind(node, kind):
        return None
    out = dict(node)
    for key in _SUB_SCHEMAS:
        if key in node:
            out[key] = sub = _checked(node[key])
            if sub is None:
                return None
    if _prebuilt(node, kind) and out != node:
        return None
    return out


def _prebuilt(node: dict[str, Any], kind: str) -> bool:
    """Whether pydantic-core validates ``node`` with its class's prebuilt validator (its rule, as of 2.27)."""
    if kind not in ('model', 'dataclass') or (kind == 'dataclass' and 'generic_origin' in node):
        return False
    return bool(getattr(node.get('cls'), '__dict__', {}).get('__pydantic_complete__', False))


def _bounded_kind(node: dict[str, Any], kind: str) -> bool:
    """Whether a container's own values are all validated by its sub-schemas (no raw JSON kept)."""
    if node.get('extra_behavior') == 'allow' or (node.get('config') or {}).get('extra_fields_behavior') == 'allow':
        return False  # extra members are kept as parsed
    if kind in ('model', 'dataclass'):
        return not (node.get('custom_init') or node.get('post_init') or node.get('root_model'))
    if kind in _UNTYPED_WITHOUT:
        return _UNTYPED_WITHOUT[kind] in node
    return kind in _WRAPPERS


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
