"""Numbers a tool accepts from the model: finite, and integers within the signed 64-bit range (beyond Spring AI).

Why: pydantic (lax mode) turns ``"nan"``/``"inf"`` strings, JSON's ``NaN``/``Infinity`` extensions and
overflowing literals (``1e400``) into non-finite floats, and accepts integers of any size. A NaN then
passes every comparison a tool makes to refuse a value (``if amount > 100: refuse``), and a
``2**64`` breaks the database column or native library it reaches. So every tool kind checks the
values it bound from the arguments: each ``float``/``Decimal``/``complex`` must be finite, each ``int``
(``bool`` and enum members aside) within ``[-2**63, 2**63 - 1]``; anything else is an invalid
argument, answered to the model like a schema failure. Only what the model sent is checked: a
parameter or field left to its default (``limit: float = math.inf``) is the developer's value.

How, cheapest first: bounds in the validator's own schema (:func:`checked_validator`); else a check
generated from the schema that visits only its number positions (:func:`numbers_checker`); else, or
when either says no, the walk over every value that names the problems (:func:`number_problems`).
"""

from __future__ import annotations

import collections
import dataclasses
import decimal
import enum
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pydantic
import pydantic_core

from toolweave._native import SchemaValidator, numbers_fine
from toolweave.exceptions import SchemaValidationError

__all__ = [
    'BOUND_ERRORS',
    'INT64_MAX',
    'INT64_MIN',
    'NOT_FINITE',
    'OUT_OF_RANGE',
    'WORDED',
    'Failure',
    'Location',
    'bounded_integers',
    'checked_validator',
    'dotted',
    'extended_arguments',
    'may_hold_inf_nan',
    'number_message',
    'number_problems',
    'numbers_checker',
    'schema_problems',
    'written_failures',
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NOT_FINITE = 'Input should be a finite number'
OUT_OF_RANGE = 'Input should be an integer between -2**63 and 2**63 - 1 (signed 64-bit)'
WORDED = {'int_parsing_size': OUT_OF_RANGE}
"""pydantic error types worded this module's way, whatever the input (see :func:`number_message`)."""

Location = tuple[Any, ...]
"""Keys and indices from the checked value down to the offending number."""

_SKIPPED = (bool, str, bytes, bytearray, enum.Enum)
_NUMBERS = (int, float, complex, decimal.Decimal)
_SEQUENCES = (list, tuple, set, frozenset)


def number_problems(value: Any, sent: Any = None) -> list[tuple[Location, str]]:
    """``(location, reason)`` for each non-finite or out-of-range number inside ``value``, in document order.

    ``value`` is what an argument binding produced: dicts, lists, tuples, sets, pydantic models (only
    the fields the input set), dataclasses and scalars; other objects are not looked into. Shared or
    cyclic containers are visited once. The usual shapes (JSON-like values, enums, pydantic models)
    pass the core's quick check (``numbers_fine``) first.

    ``sent`` is the parsed JSON ``value`` was validated from, when known (``None``: not known). A
    dataclass field or dict key (a TypedDict's) that ``sent`` does not hold was filled by its default
    (``default_factory`` too) and is not looked at; this is decided only where nothing was renamed
    (every key of the sent object is a field name, or a key of the validated dict), else, and without
    ``sent``, every member is checked but a dataclass field holding its very ``default`` object.
    """
    if numbers_fine(value, pydantic.BaseModel, enum.Enum):
        return []
    problems: list[tuple[Location, str]] = []
    seen: set[int] = set()
    stack: list[tuple[Location, Any, Any]] = [((), value, sent)]
    while stack:
        location, item, given = stack.pop()
        reason = _scalar_problem(item)
        if reason is not None:
            problems.append((location, reason))
        elif not isinstance(item, _SKIPPED + _NUMBERS) and id(item) not in seen:
            seen.add(id(item))
            children = [((*location, key), child, source) for key, child, source in _children(item, given)]
            stack.extend(reversed(children))
    return problems


def dotted(location: Location) -> str:
    """A pydantic-style location: ``items.0.price`` (``''`` for the empty one), as ``'.'.join(map(str, location))``.

    One format call: ``str()`` of each part costs a type call apiece (a tool call's invalid path formats one per error).
    """
    return '.'.join(['%s'] * len(location)) % location


def number_message(error: Mapping[str, Any]) -> str:
    """The message of a pydantic error (``ErrorDetails``, with its ``input``), in this module's words for numbers.

    An integer too large for a float, validated as a float from Python (the parsed arguments: ``1`` and
    400 zeros), is pydantic's ``float_type`` ("a valid number"); validated from the JSON text it becomes
    infinite ("a finite number"). Both paths of a tool say :data:`NOT_FINITE` for it. pydantic's
    ``int_parsing_size`` (a float such as ``1e20`` for an ``int``, or an integer of thousands of digits: "Unable
    to parse input string as an integer, exceeded maximum size", though no string was sent) is
    :data:`OUT_OF_RANGE`, as an integer literal beyond 64 bits is.
    """
    kind = error['type']
    if kind in WORDED:
        return WORDED[kind]
    given = error.get('input')
    if kind == 'float_type' and isinstance(given, int) and not isinstance(given, bool):
        return NOT_FINITE
    return str(error['msg'])


def extended_arguments(text: str) -> dict[str, Any] | None:
    """The argument object of ``text`` read with JSON's ``NaN``/``Infinity``/``-Infinity`` extensions; ``None`` if not one.

    For a text the strict parser refused: pydantic's one-step path reads those words (its parser,
    jiter, allows them), so the slow path reads them too and names each as the number problem it
    is (:data:`NOT_FINITE`, at its location) rather than as a syntax error. Texts without those
    words are not parsed again.
    """
    if not may_hold_inf_nan(text):
        return None
    try:
        value = pydantic_core.from_json(text, allow_inf_nan=True)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def may_hold_inf_nan(text: str) -> bool:
    """Whether ``text`` holds ``NaN`` or ``Infinity`` (JSON's extensions, or words in a string).

    Each word is searched only when its first letter is in the text (a one-character search is a ``memchr``).
    """
    return ('N' in text and 'NaN' in text) or ('I' in text and 'Infinity' in text)


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


def _children(item: Any, given: Any) -> Iterator[tuple[Any, Any, Any]]:
    """``(key, child, sent child or None)`` to look into; a mapping's keys are checked too (``dict[int, ...]`` keys)."""
    if isinstance(item, Mapping):
        intact = isinstance(given, Mapping) and all(key in item for key in given)
        for key, child in item.items():
            if intact and key not in given:
                continue  # not sent, nothing renamed: a default (a TypedDict field's)
            yield key, key, None
            yield key, child, given[key] if intact else None
    elif isinstance(item, _SEQUENCES):
        same = isinstance(given, list) and not isinstance(item, set | frozenset) and len(given) == len(item)
        for index, child in enumerate(item):
            yield index, child, given[index] if same else None
    elif isinstance(item, pydantic.BaseModel):
        given_names = item.model_fields_set
        for name, info in type(item).model_fields.items():
            if name in given_names:
                yield name, getattr(item, name, None), _sent_member(given, _input_keys(name, info))
        for key, child in (item.__pydantic_extra__ or {}).items():
            yield key, child, given.get(key) if isinstance(given, Mapping) else None
    elif dataclasses.is_dataclass(item) and not isinstance(item, type):
        yield from _dataclass_children(item, given)


def _dataclass_children(item: Any, given: Any) -> Iterator[tuple[Any, Any, Any]]:
    """The fields of a dataclass instance, without those left to their default (see :func:`number_problems`)."""
    infos = getattr(type(item), '__pydantic_fields__', {})
    keys = {field.name: _input_keys(field.name, infos.get(field.name)) for field in dataclasses.fields(item)}
    known = isinstance(given, Mapping) and all(any(key in names for names in keys.values()) for key in given)
    for field in dataclasses.fields(item):
        child = getattr(item, field.name, None)
        defaulted = field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
        if child is field.default or (known and defaulted and not any(key in given for key in keys[field.name])):
            continue
        yield field.name, child, _sent_member(given, keys[field.name])


def _input_keys(name: str, info: Any) -> tuple[str, ...]:
    """The keys the input may give a field under: its string aliases, then its name; ``()`` when not known.

    Not known: an ``AliasChoices``/``AliasPath`` validation alias (which of the keys pydantic took, or
    from where, is not told), so nothing below is skipped.
    """
    aliases = (getattr(info, 'validation_alias', None), getattr(info, 'alias', None))
    if aliases[0] is not None and not isinstance(aliases[0], str):
        return ()
    return (*(alias for alias in aliases if isinstance(alias, str)), name)


def _sent_member(given: Any, keys: tuple[str, ...]) -> Any:
    """The sent value of a field (the first of its ``keys`` in ``given``), ``None`` when not known."""
    if isinstance(given, Mapping):
        for key in keys:
            if key in given:
                return given[key]
    return None


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
    {'items', 'additionalProperties', 'then', 'else', 'contains', 'propertyNames'}
    | {'unevaluatedItems', 'unevaluatedProperties', 'additionalItems'}
)
"""Keywords whose value is one schema that constrains the instance. ``not`` and ``if`` are left as written: bounds
inside a condition constrain nothing, they only invert or switch it (``{"not": {"type": "integer"}}`` would let
``1e20`` through and name the added bounds in its message)."""
_SCHEMA_LISTS = frozenset({'allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'})
_SCHEMA_MAPS = frozenset({'properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'})


def bounded_integers(schema: Any) -> Any:
    """A copy of a JSON Schema where every ``"type": "integer"`` also has the signed 64-bit bounds.

    For validation only (the model still reads the schema as written): JSON Schema counts ``1e20``
    as an integer, and a raw-schema tool's ``dict`` would carry it as a float beyond any 64-bit
    column. Tighter ``minimum``/``maximum`` values are kept, and no bound is added beside an
    ``exclusiveMinimum``/``exclusiveMaximum`` of the schema's own inside it; values of ``enum``, ``const``,
    ``default`` and ``examples`` are data, not schemas, and are left as they are, and so are the
    conditions ``not`` and ``if`` (see :data:`_SCHEMA_KEYWORDS`).
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
        if not _within(result.get('exclusiveMinimum'), INT64_MIN, operator.ge):  # else 1e20 would be named twice
            result['minimum'] = _tighter(result.get('minimum'), INT64_MIN, max)
        if not _within(result.get('exclusiveMaximum'), INT64_MAX, operator.le):
            result['maximum'] = _tighter(result.get('maximum'), INT64_MAX, min)
    return result


def _within(bound: Any, limit: int, holds: Any) -> bool:
    """Whether ``bound`` (a schema's own exclusive bound) is a number already inside ``limit`` (``holds(bound, limit)``)."""
    return isinstance(bound, int | float) and not isinstance(bound, bool) and bool(holds(bound, limit))


_INT64_BOUNDS = (f' {INT64_MAX}', f' {INT64_MIN}')

Failure = Mapping[str, Any]
"""A raw-schema failure, as ``SchemaValidationError.errors`` holds it: ``{'pointer', 'keyword', 'message'}``."""


def schema_problems(failures: Sequence[Failure], as_written: Callable[[], Iterable[Failure]]) -> list[str]:
    """``'<JSON pointer>: <message>'`` of each of ``failures`` (a :func:`bounded_integers` schema's; ``/`` is the whole value).

    A failure at a 64-bit bound :func:`bounded_integers` added (``1e20`` for an ``"integer"``: "greater than the
    maximum of 9223372036854775807", a bound the model never saw) is :data:`OUT_OF_RANGE`, as an integer literal
    beyond 64 bits is. A ``maximum``/``minimum`` the schema has of its own at that very value (a ``"number"``
    field's, or an ``"integer"``'s) is worded as the validator words it: ``as_written`` gives the failures of the
    same value under the schema as written (see :func:`written_failures`; called only when a message ends in the
    bound), and a failure found there too, as often as there, is the schema's own.
    """
    problems = []
    at_bound = False
    for failure in failures:  # one loop: an invalid call's path (no comprehension, zip or lambda of its own)
        message = str(failure['message'])
        problems.append(f'{failure["pointer"] or "/"}: {message}')
        if failure['keyword'] in ('maximum', 'minimum') and message.endswith(_INT64_BOUNDS):
            at_bound = True
    if not at_bound:
        return problems
    own = collections.Counter(_failure_key(failure) for failure in as_written())
    for index, failure in enumerate(failures):
        message = str(failure['message'])
        if failure['keyword'] in ('maximum', 'minimum') and message.endswith(_INT64_BOUNDS):
            key = _failure_key(failure)
            if own[key] > 0:
                own[key] -= 1
            else:
                problems[index] = f'{failure["pointer"] or "/"}: {OUT_OF_RANGE}'
    return problems


def written_failures(schema: Mapping[str, Any]) -> Callable[[str], list[Failure]]:
    """``text`` -> the failures of its arguments under ``schema`` as written (``[]`` if none), for :func:`schema_problems`.

    ``schema`` is the one :func:`bounded_integers` was given; its validator is compiled on the first call. ``[]`` also
    when it cannot be compiled or ``text`` cannot be validated (then every failure at the bound reads as an added one).
    """
    compiled: list[SchemaValidator] = []

    def failures(text: str) -> list[Failure]:
        try:
            if not compiled:
                compiled.append(SchemaValidator(dict(schema)))
            compiled[0].validate_json(text)
        except SchemaValidationError as exc:
            return list(exc.errors)
        except (TypeError, ValueError):
            return []
        return []

    return failures


def _failure_key(failure: Failure) -> tuple[str, str, str]:
    return str(failure['pointer']), str(failure['keyword']), str(failure['message'])


def _tighter(bound: Any, limit: int, pick: Any) -> Any:
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        return pick(bound, limit)
    return limit


_NO_NUMBERS = frozenset(
    {'str', 'bool', 'none', 'enum', 'date', 'time', 'datetime', 'timedelta', 'uuid', 'url', 'multi-host-url', 'bytes'}
)
"""Core schema types whose validated values hold no number :func:`number_problems` reports."""
_LEAF_CHECKS = {
    'int': f'if not {INT64_MIN} <= {{x}} <= {INT64_MAX}:',
    'float': 'if not _isfinite({x}):',
    'decimal': 'if not {x}.is_finite():',
}
"""The condition that makes a number leaf a problem, as :func:`number_problems` would report it."""
_MAX_BLOCKS = 12
"""Deepest nesting of generated blocks (Python refuses more than 20); deeper schemas keep the walk."""


class _Unbounded(Exception):
    """A schema whose values the generated check cannot cover: the caller keeps :func:`number_problems`."""


def numbers_checker(core_schema: Any) -> Callable[[Any], bool] | None:
    """A check of values validated by ``core_schema``: ``True`` only if :func:`number_problems` finds nothing in them.

    Generated once from the schema: it visits only where the schema puts numbers (``int``, ``float``,
    ``decimal`` leaves and the models, TypedDicts, dataclasses, lists, sets and dicts holding them),
    every field whether the input set it or not (a superset of what :func:`number_problems` looks at),
    where :func:`number_problems` (and the core's ``numbers_fine``) visits every value. ``False``
    (and any value not shaped as the schema says) only means "walk". ``None`` when the schema holds
    what the check cannot cover: validator functions, custom ``__init__``/post-init, unions, ``Any``
    or untyped containers, extra members kept, literals of unbounded numbers, tuples with numbers.
    """
    compiler = _CheckCompiler()
    try:
        lines = compiler.lines(core_schema, 'value', 1)
    except (_Unbounded, KeyError, TypeError, RecursionError):
        return None
    if not lines:
        return _no_numbers
    source = '\n'.join(
        [
            'def check(value):',
            '    try:',
            *('        ' + line for line in lines),
            '    except (TypeError, AttributeError, KeyError, ValueError):',
            '        return False',
            '    return True',
        ]
    )
    exec(compile(source, '<toolweave number check>', 'exec'), compiler.namespace)  # noqa: S102 - our own code
    check: Callable[[Any], bool] = compiler.namespace['check']
    return check


def _no_numbers(value: Any) -> bool:
    """The check of a schema that holds no number."""
    return True


class _CheckCompiler:
    """Source lines that ``return False`` when a number in a variable's value is out of bounds (see :func:`numbers_checker`)."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {'_isfinite': math.isfinite, '_absent': _ABSENT}
        self.definitions: dict[str, Any] = {}
        self._names = itertools.count()

    def name(self, prefix: str, value: Any = None) -> str:
        name = f'{prefix}{next(self._names)}'
        if value is not None:
            self.namespace[name] = value
        return name

    def lines(self, node: dict[str, Any], x: str, blocks: int) -> list[str]:
        """Statements checking the value in variable ``x`` (``[]`` when it holds no number)."""
        if blocks > _MAX_BLOCKS:
            raise _Unbounded
        kind = node['type']
        if kind in _NO_NUMBERS:
            return []
        if kind in _LEAF_CHECKS:
            return [_LEAF_CHECKS[kind].format(x=x), '    return False']
        if kind == 'literal':
            if number_problems(list(node['expected'])):
                raise _Unbounded
            return []
        if kind == 'definitions':
            self.definitions.update({definition['ref']: definition for definition in node['definitions']})
            return self.lines(node['schema'], x, blocks)
        if kind == 'definition-ref':
            return self.lines(self.definitions[node['schema_ref']], x, blocks + 1)
        if kind in ('nullable', 'default'):
            return self.guarded(node, x, blocks)
        if kind in ('list', 'set', 'frozenset'):
            return self.each(node['items_schema'], f'for {{item}} in {x}:', blocks)
        if kind == 'dict':
            return self.mapping(node, x, blocks)
        if kind == 'tuple':
            if any(self.lines(item, 'item', blocks + 1) for item in node['items_schema']):
                raise _Unbounded
            return []
        return self.fields(node, x, blocks)

    def guarded(self, node: dict[str, Any], x: str, blocks: int) -> list[str]:
        """``nullable``: checked unless ``None``; ``default``: unless the default itself (the developer's value)."""
        inner = self.lines(node['schema'], x, blocks + 1)
        if not inner:
            return []
        if node['type'] == 'nullable':
            return [f'if {x} is not None:', *_indent(inner)]
        default = self.name('_default', [node.get('default', _ABSENT)])
        return [f'if {x} is not {default}[0]:', *_indent(inner)]

    def each(self, item_schema: dict[str, Any], loop: str, blocks: int) -> list[str]:
        item = self.name('item')
        inner = self.lines(item_schema, item, blocks + 1)
        return [loop.format(item=item), *_indent(inner)] if inner else []

    def mapping(self, node: dict[str, Any], x: str, blocks: int) -> list[str]:
        key, item = self.name('key'), self.name('item')
        inner = self.lines(node['keys_schema'], key, blocks + 1) + self.lines(node['values_schema'], item, blocks + 1)
        return [f'for {key}, {item} in {x}.items():', *_indent(inner)] if inner else []

    def fields(self, node: dict[str, Any], x: str, blocks: int) -> list[str]:
        """Models, TypedDicts and dataclasses whose values all come from their fields' schemas."""
        kind = node['type']
        if node.get('custom_init') or node.get('post_init') or node.get('root_model') or _keeps_extra(node):
            raise _Unbounded
        if kind == 'model':
            inner = node['schema']
            if inner['type'] != 'model-fields' or _keeps_extra(inner):
                raise _Unbounded
            members = self.name('members')
            checks = [
                (f'{self.name("field")} = {members}[{name!r}]', field['schema'])
                for name, field in inner['fields'].items()
            ]
            return self.members([f'{members} = {x}.__dict__'], checks, blocks)
        if kind == 'typed-dict':
            out: list[str] = []
            for name, field in node['fields'].items():
                var = self.name('field')
                check = self.lines(field['schema'], var, blocks + 1)
                if check and field.get('required', True):
                    out += [f'{var} = {x}[{name!r}]', *check]
                elif check:
                    out += [f'{var} = {x}.get({name!r}, _absent)', f'if {var} is not _absent:', *_indent(check)]
            return out
        if kind == 'dataclass':
            inner = node['schema']
            if inner['type'] != 'dataclass-args' or _keeps_extra(inner):
                raise _Unbounded
            checks = [
                (f'{self.name("field")} = getattr({x}, {field["name"]!r})', field['schema'])
                for field in inner['fields']
            ]
            return self.members([], checks, blocks)
        raise _Unbounded

    def members(self, head: list[str], checks: list[tuple[str, dict[str, Any]]], blocks: int) -> list[str]:
        out: list[str] = []
        for assign, schema in checks:
            var = assign.split(' = ', 1)[0]
            check = self.lines(schema, var, blocks + 1)
            if check:
                out += [assign, *check]
        return head + out if out else []


_ABSENT = object()


def _keeps_extra(node: dict[str, Any]) -> bool:
    config = node.get('config') or {}
    return node.get('extra_behavior') == 'allow' or config.get('extra_fields_behavior') == 'allow'


def _indent(lines: list[str]) -> list[str]:
    return ['    ' + line for line in lines]
