"""Twin of ``toolweave._core.ArgumentDecoder``: valid tool arguments decoded without pydantic's ``validate_json``.

``ArgumentDecoder.build(core_schema)`` compiles a plan, once, from a pydantic core schema
(``TypeAdapter(X).core_schema``) when every node, key and config in it is in the subset below;
otherwise it returns ``None``. ``decode(text)`` returns exactly what
``TypeAdapter(X).validator.validate_json(text)`` returns when that succeeds and every number in the
result is fine for toolweave (ints within signed 64 bits, floats finite), and ``None`` whenever it is
not certain of that (the caller then runs pydantic). It parses with :func:`parse_arguments`
(strict), CHECKs the parsed value against the plan without side effects, and only then BUILDs the
result (enum members, ``int`` -> ``float``, model instances, defaults, ``default_factory`` calls), so
user code runs at most once per call.

The subset, with the pydantic-core rule each node follows (files under ``src/validators/``):

* ``str`` (``min_length``/``max_length`` in code points), ``bool``, ``none``, ``any``, ``nullable``;
* ``int`` (JSON integers only, no ``3.0`` or ``"3"``: pydantic's lax coercions are left to it;
  ``ge``/``gt``/``le``/``lt``/``multiple_of``), ``float`` (JSON numbers, ``float(value)``; bounds);
* ``literal`` (``literal.rs``: the value looked up as pydantic's ``LiteralLookup`` does, here only
  for a JSON value of the same JSON type as an expected value or enum member value);
* ``enum`` with ``sub_type`` ``'str'``/``'int'`` and no ``missing`` hook (``enum_.rs``: the member
  whose value equals the JSON value, the last one for equal values);
* ``list``, ``dict`` with ``str`` keys (a duplicate key in the text, undetectable after parsing, is
  refused by a count of ``:`` characters when the plan holds such a dict: pydantic validates every
  pair, not only the last);
* ``typed-dict`` (``typed_dict.rs``: its own config only; output keys in schema order, then kept
  extras in input order; ``forbid``/``ignore``, ``allow`` without ``extras_schema`` or a renamed
  field, whose name pydantic-core never keeps as an extra), ``model``
  with ``model-fields`` (``model.rs``/``model_fields.rs``: ``object.__new__`` then ``__dict__``,
  ``__pydantic_extra__ = None``, ``__pydantic_private__ = None``, ``__pydantic_fields_set__`` = the
  names sent; no ``__init__``, post-init, root model or ``allow``); a field's ``validation_alias``
  (a plain ``str``) is its JSON key;
* ``default`` as a field's schema (``with_default.rs``: an unhashable default is deep-copied per use,
  a hashable one is returned as it is; ``default_factory`` is called, ``takes_data`` refused; its result is
  not judged by the numbers rule: a model field's is not judged by the tool's rule either, and a typed dict
  field's is left to the caller, see ``ArgumentDecoder.typed_dict_factories``);
* ``definitions`` / ``definition-ref`` (recursive types).

``errors(text)`` returns, for arguments pydantic surely refuses, exactly the errors ``validate_json(text)``
raises (``ValidationError.errors(include_url=False, include_context=False, include_input=False)``: ``type``,
``loc``, ``msg``), so an invalid call is answered without running pydantic; ``None`` when not certain. Each
value is either CHECKed valid, or a certain failure of pydantic's lax JSON mode (``input_python.rs``/
``input_json.rs``, ``shared.rs``): a string without an ASCII digit for an ``int`` (``int_parsing``), a
number with a fractional part for an ``int`` (``int_from_float``), a string without an ASCII digit, ``inf``
or ``nan`` for a ``float`` (``float_parsing``), a string no word of ``str_as_bool`` could be or an integer
other than 0 and 1 for a ``bool`` (``bool_parsing``), a JSON type the node never takes (``*_type``), a
required field left out (``missing``; one that takes ``None`` answers ``None``: a tool fills it), an extra of a ``forbid`` typed dict or model (``extra_forbidden``);
anything else (lax coercions, bounds, lengths, literals, renamed fields, repeated keys) answers ``None``.
Errors come in pydantic's order: fields in schema order, then extras in input order.

Nesting deeper than :data:`MAX_DEPTH` containers is refused (pydantic's JSON parser has its own
limit). Anything else -- validators, unions, tuples, sets, dates, ``strict``, string transforms,
patterns, unknown keys -- makes ``build`` return ``None``.
"""

from __future__ import annotations

import copy
import enum
import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolweave._reference.json import parse_arguments
from toolweave._reference.numbers import numbers_fine
from toolweave.exceptions import ToolArgumentsError

__all__ = ['MAX_DEPTH', 'ArgumentDecoder']

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
MAX_DEPTH = 100
"""Deepest container nesting decoded (the top-level object is depth 0); deeper values answer ``None``."""
_JSON_WS = ' \t\n\r'

_MESSAGES = {
    'int_parsing': 'Input should be a valid integer, unable to parse string as an integer',
    'int_from_float': 'Input should be a valid integer, got a number with a fractional part',
    'int_type': 'Input should be a valid integer',
    'float_parsing': 'Input should be a valid number, unable to parse string as a number',
    'float_type': 'Input should be a valid number',
    'bool_parsing': 'Input should be a valid boolean, unable to interpret input',
    'bool_type': 'Input should be a valid boolean',
    'string_type': 'Input should be a valid string',
    'list_type': 'Input should be a valid array',
    'dict_type': 'Input should be an object',
    'model_type': 'Input should be an object',
    'missing': 'Field required',
    'extra_forbidden': 'Extra inputs are not permitted',
}
"""pydantic-core's message of each error type ``errors`` reports, for JSON input (``ErrorType::message_template_json``)."""
_BOOL_WORDS = frozenset({'0', 'off', 'f', 'false', 'n', 'no', '1', 'on', 't', 'true', 'y', 'yes'})
"""What pydantic-core's ``str_as_bool`` reads as a bool, in any case."""
_PARSED_LENGTH = 1000
"""Strings up to this many characters are judged unparsable as numbers (pydantic has size errors for long ones)."""
_Found = list[tuple[str, tuple[Any, ...]]]

_COMMON = frozenset({'type', 'ref', 'metadata', 'serialization'})
_CONFIG_FREE = frozenset(
    {'title', 'extra_fields_behavior', 'typed_dict_total', 'loc_by_alias', 'hide_input_in_errors'}
    | {'validation_error_cause', 'ser_json_timedelta', 'ser_json_temporal', 'ser_json_bytes', 'ser_json_inf_nan'}
    | {'val_json_bytes', 'cache_strings', 'serialize_by_alias', 'from_attributes', 'revalidate_instances'}
    | {'allow_inf_nan', 'coerce_numbers_to_str', 'regex_engine', 'url_preserve_empty_path', 'ser_json_val_json'}
)
"""Core config keys that change nothing for the subset (JSON input, no instances, no patterns)."""
_CONFIG_DEFAULTS: dict[str, Any] = {
    'validate_by_alias': True,
    'validate_by_name': False,
    'strict': False,
    'validate_default': False,
    'str_strip_whitespace': False,
    'str_to_lower': False,
    'str_to_upper': False,
}
"""Core config keys allowed only with the value that changes nothing."""
_MODEL_KEYS = frozenset(
    {'cls', 'schema', 'config', 'custom_init', 'root_model', 'post_init', 'generic_origin', 'frozen'}
    | {'revalidate_instances', 'extra_behavior'}
)
_FIELD_KEYS = frozenset(
    {'schema', 'validation_alias', 'serialization_alias', 'serialization_exclude', 'serialization_exclude_if'}
)
_DEFAULT_KEYS = frozenset(
    {'schema', 'default', 'default_factory', 'default_factory_takes_data', 'on_error', 'validate_default'}
)


class _Unsure(Exception):
    """A schema outside the subset (build) or a value not certain (build phase of decode)."""


class ArgumentDecoder:
    """A plan compiled from a pydantic core schema; see the module docstring. Immutable; thread-safe."""

    __slots__ = ('_counts_pairs', '_root', 'typed_dict_factories')

    def __init__(self, root: _Node, counts_pairs: bool, typed_dict_factories: bool) -> None:
        self._root = root
        self._counts_pairs = counts_pairs
        #: A typed dict of the plan has a field with a ``default_factory``: its result, in what ``decode``
        #: returns, is not judged by the numbers rule; the caller judges it as it judges ``validate_json``'s
        #: (judging it here would answer ``None`` after the factory ran, and pydantic would call it again).
        self.typed_dict_factories = typed_dict_factories

    @staticmethod
    def build(core_schema: Mapping[str, Any]) -> ArgumentDecoder | None:
        """The decoder of ``core_schema``, or ``None`` when any part of it is outside the subset. Never raises."""
        try:
            compiler = _Compiler()
            root = compiler.node(core_schema, None)
            compiler.finish()
        except Exception:  # noqa: BLE001 - malformed or unknown schemas: no plan
            return None
        return ArgumentDecoder(root, compiler.counts_pairs, compiler.typed_dict_factories)

    def decode(self, text: str) -> Any | None:
        """What ``validate_json(text)`` returns, or ``None`` when not certain (see the module docstring).

        Raises:
            Exception: only what a ``default_factory`` raises.
        """
        if type(text) is not str:
            return None
        try:
            value = parse_arguments(text)
        except ToolArgumentsError:
            return None
        if not value and not text.strip(_JSON_WS):  # empty text: {} for us, invalid JSON for pydantic
            return None
        if self._counts_pairs and not _no_duplicate_keys(text, value):
            return None
        if not self._root.check(value, 0):
            return None
        return self._root.build(value)

    def errors(self, text: str) -> list[dict[str, Any]] | None:
        """The errors of ``validate_json(text)`` when pydantic surely refuses ``text``, else ``None`` (never raises).

        Each is ``{'type', 'loc', 'msg'}`` as ``ValidationError.errors(include_url=False, include_context=False,
        include_input=False)`` gives it (see the module docstring for what is judged).
        """
        if type(text) is not str:
            return None
        try:
            value = parse_arguments(text)
        except ToolArgumentsError:
            return None
        if not text.strip(_JSON_WS) or _repeats_a_key(text):
            return None
        found: _Found = []
        if not self._root.judge(value, 0, (), found) or not found:
            return None
        return [{'type': kind, 'loc': loc, 'msg': _MESSAGES[kind]} for kind, loc in found]


# ---------------------------------------------------------------------------------------------- plan nodes


class _Node:
    """A compiled schema node: ``check`` (no side effects) then ``build`` (only after ``check`` passed)."""

    __slots__ = ()

    def check(self, value: Any, depth: int) -> bool:
        raise NotImplementedError

    def build(self, value: Any) -> Any:
        return value

    def judge(self, value: Any, depth: int, loc: tuple[Any, ...], found: _Found) -> bool:
        """Add to ``found`` the errors pydantic surely finds in ``value`` at ``loc``; ``False``: not certain."""
        if self.check(value, depth):
            return True
        kind = self.failure(value)
        if kind is None:
            return False
        found.append((kind, loc))
        return True

    def failure(self, value: Any) -> str | None:
        """The error type pydantic surely gives ``value`` (which failed :meth:`check`), or ``None``."""
        return None


class _Str(_Node):
    __slots__ = ('max_length', 'min_length')

    def __init__(self, min_length: int, max_length: int | None) -> None:
        self.min_length, self.max_length = min_length, max_length

    def check(self, value: Any, depth: int) -> bool:
        if type(value) is not str:
            return False
        size = len(value)
        return size >= self.min_length and (self.max_length is None or size <= self.max_length)

    def failure(self, value: Any) -> str | None:
        kind = type(value)  # a number may be coerced (``coerce_numbers_to_str``)
        return None if kind is str or kind is int or kind is float else 'string_type'


class _Bounds:
    """``ge``/``gt``/``le``/``lt`` of a number node (``None``: absent)."""

    __slots__ = ('ge', 'gt', 'le', 'lt')

    def __init__(self, node: Mapping[str, Any], fits: Callable[[Any], bool]) -> None:
        if any(node.get(key) is not None and not fits(node[key]) for key in self.__slots__):
            raise _Unsure('bounds')
        self.ge: Any = node.get('ge')
        self.gt: Any = node.get('gt')
        self.le: Any = node.get('le')
        self.lt: Any = node.get('lt')

    def hold(self, number: float) -> bool:
        return not (
            (self.ge is not None and not number >= self.ge)
            or (self.gt is not None and not number > self.gt)
            or (self.le is not None and not number <= self.le)
            or (self.lt is not None and not number < self.lt)
        )


class _Int(_Node):
    __slots__ = ('bounds', 'multiple_of')

    def __init__(self, bounds: _Bounds, multiple_of: int | None) -> None:
        self.bounds, self.multiple_of = bounds, multiple_of

    def check(self, value: Any, depth: int) -> bool:
        if type(value) is not int or not INT64_MIN <= value <= INT64_MAX or not self.bounds.hold(value):
            return False
        return self.multiple_of is None or value % self.multiple_of == 0

    def failure(self, value: Any) -> str | None:
        kind = type(value)
        if kind is str:
            return 'int_parsing' if _no_digit(value) else None
        if kind is float:
            return 'int_from_float' if math.isfinite(value) and not value.is_integer() else None
        return None if kind is int or kind is bool else 'int_type'


class _Float(_Node):
    __slots__ = ('bounds',)

    def __init__(self, bounds: _Bounds) -> None:
        self.bounds = bounds

    def check(self, value: Any, depth: int) -> bool:
        kind = type(value)
        if kind is float:
            return math.isfinite(value) and self.bounds.hold(value)
        return kind is int and INT64_MIN <= value <= INT64_MAX and self.bounds.hold(float(value))

    def build(self, value: Any) -> Any:
        return float(value)

    def failure(self, value: Any) -> str | None:
        kind = type(value)
        if kind is str:
            lowered = value.lower()
            return 'float_parsing' if _no_digit(value) and 'inf' not in lowered and 'nan' not in lowered else None
        return None if kind is int or kind is float or kind is bool else 'float_type'


class _Bool(_Node):
    __slots__ = ()

    def check(self, value: Any, depth: int) -> bool:
        return type(value) is bool

    def failure(self, value: Any) -> str | None:
        kind = type(value)
        if kind is str:
            maybe = value.isascii() and value.strip(_JSON_WS).lower() in _BOOL_WORDS
            return None if maybe else 'bool_parsing'
        if kind is int:
            return 'bool_parsing' if value not in (0, 1) and INT64_MIN <= value <= INT64_MAX else None
        return None if kind is float else 'bool_type'


class _None(_Node):
    __slots__ = ()

    def check(self, value: Any, depth: int) -> bool:
        return value is None


class _Any(_Node):
    """The parsed value as it is, when every number inside is fine."""

    __slots__ = ()

    def check(self, value: Any, depth: int) -> bool:
        return _json_numbers_fine(value, depth)


class _Nullable(_Node):
    __slots__ = ('inner',)

    def __init__(self, inner: _Node) -> None:
        self.inner = inner

    def check(self, value: Any, depth: int) -> bool:
        return value is None or self.inner.check(value, depth)

    def judge(self, value: Any, depth: int, loc: tuple[Any, ...], found: _Found) -> bool:
        return value is None or self.inner.judge(value, depth, loc, found)

    def build(self, value: Any) -> Any:
        return None if value is None else self.inner.build(value)


class _Lookup(_Node):
    """``literal`` and ``enum``: a JSON scalar, by ``(type, value)``, -> what pydantic returns for it."""

    __slots__ = ('table',)

    def __init__(self, table: dict[tuple[type, Any], Any]) -> None:
        self.table = table

    def check(self, value: Any, depth: int) -> bool:
        kind = type(value)
        return (kind is str or kind is int or kind is bool or value is None) and (kind, value) in self.table

    def build(self, value: Any) -> Any:
        return self.table[type(value), value]


class _Sized(_Node):
    """A list or dict of one inner node, with length bounds: ``check`` and ``judge`` of both (one place)."""

    __slots__ = ('inner', 'max_length', 'min_length')
    kind: type[list[Any] | dict[Any, Any]]
    type_error: str

    def __init__(self, inner: _Node, min_length: int, max_length: int | None) -> None:
        self.inner, self.min_length, self.max_length = inner, min_length, max_length

    @staticmethod
    def entries(value: Any) -> Iterable[tuple[Any, Any]]:
        """``(location key, item)`` of each entry of ``value``."""
        raise NotImplementedError

    def check(self, value: Any, depth: int) -> bool:
        if (
            type(value) is not self.kind
            or depth >= MAX_DEPTH
            or not _size_fits(len(value), self.min_length, self.max_length)
        ):
            return False
        check, depth = self.inner.check, depth + 1
        return all(check(item, depth) for _, item in self.entries(value))

    def judge(self, value: Any, depth: int, loc: tuple[Any, ...], found: _Found) -> bool:
        if type(value) is not self.kind:
            found.append((self.type_error, loc))
            return True
        if depth >= MAX_DEPTH or not _size_fits(len(value), self.min_length, self.max_length):
            return False
        judge = self.inner.judge
        return all(judge(item, depth + 1, (*loc, at), found) for at, item in self.entries(value))


class _List(_Sized):
    __slots__ = ()
    kind, type_error = list, 'list_type'

    @staticmethod
    def entries(value: Any) -> Iterable[tuple[Any, Any]]:
        return enumerate(value)

    def build(self, value: Any) -> Any:
        build = self.inner.build
        return [build(item) for item in value]


class _Dict(_Sized):
    __slots__ = ()
    kind, type_error = dict, 'dict_type'

    @staticmethod
    def entries(value: Any) -> Iterable[tuple[Any, Any]]:
        return value.items()  # type: ignore[no-any-return]

    def build(self, value: Any) -> Any:
        build = self.inner.build
        return {key: build(item) for key, item in value.items()}


class _Default:
    """A missing field's value (``with_default.rs``): the default (deep-copied if unhashable) or the factory's.

    A factory's result is not judged by the numbers rule (see ``ArgumentDecoder.typed_dict_factories``).
    """

    __slots__ = ('copied', 'factory', 'value')

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.factory: Callable[[], Any] | None = node.get('default_factory')
        self.value = node.get('default')
        if self.factory is None:
            if not _numbers_fine(self.value):
                raise _Unsure('default')
            self.copied = _unhashable(self.value)
        elif not callable(self.factory) or 'default' in node or node.get('default_factory_takes_data'):
            raise _Unsure('default_factory')

    def get(self) -> Any:
        if self.factory is None:
            return copy.deepcopy(self.value) if self.copied else self.value
        return self.factory()


class _Field:
    """A member of a TypedDict or model: output ``name``, JSON ``key``, value node, what a missing one gets."""

    __slots__ = ('default', 'key', 'name', 'node', 'required')

    def __init__(self, name: str, key: str, node: _Node, required: bool, default: _Default | None) -> None:
        self.name, self.key, self.node, self.required, self.default = name, key, node, required, default


class _Members(_Node):
    """The fields of a ``typed-dict`` (output: a ``dict``) or of ``model-fields`` (see :class:`_Model`)."""

    __slots__ = ('extra', 'fields', 'keys')

    def __init__(self, fields: tuple[_Field, ...], extra: str) -> None:
        self.fields, self.extra = fields, extra
        self.keys = frozenset(field.key for field in fields)
        if len(self.keys) != len(fields):
            raise _Unsure('two fields read the same key')
        if extra == 'allow' and any(field.key != field.name for field in fields):
            raise _Unsure('an allowed extra may bear a renamed field name')  # pydantic-core drops such extras

    def check(self, value: Any, depth: int) -> bool:
        if type(value) is not dict or depth >= MAX_DEPTH:
            return False
        depth += 1
        found = 0
        for field in self.fields:
            if field.key in value:
                found += 1
                if not field.node.check(value[field.key], depth):
                    return False
            elif field.required and field.default is None:
                return False
        if found == len(value) or self.extra == 'ignore':
            return True
        if self.extra == 'forbid':
            return False
        keys = self.keys  # 'allow': the extras are kept as parsed
        return all(_json_numbers_fine(item, depth) for key, item in value.items() if key not in keys)

    def judge(self, value: Any, depth: int, loc: tuple[Any, ...], found: _Found) -> bool:
        return self.judge_as(value, depth, loc, found, 'dict_type')

    def judge_as(self, value: Any, depth: int, loc: tuple[Any, ...], found: _Found, not_object: str) -> bool:
        """:meth:`judge`, with ``not_object`` the error of a value that is not an object (a model's differs)."""
        if type(value) is not dict:
            found.append((not_object, loc))
            return True
        if depth >= MAX_DEPTH:
            return False
        for field in self.fields:
            before = len(found)
            if field.key in value:
                if not field.node.judge(value[field.key], depth + 1, (*loc, field.key), found):
                    return False
            elif field.required and field.default is None:
                if _takes_none(field.node):  # a tool may fill it (its own rule): not judged
                    return False
                found.append(('missing', (*loc, field.key)))
            if len(found) != before and field.key != field.name:  # located by key or name: config's loc_by_alias
                return False
        return self.judge_extras(value, depth, loc, found)

    def judge_extras(self, value: dict[str, Any], depth: int, loc: tuple[Any, ...], found: _Found) -> bool:
        keys = self.keys
        for key, item in value.items():
            if key in keys:
                continue
            if self.extra == 'forbid':
                found.append(('extra_forbidden', (*loc, key)))
            elif self.extra == 'allow' and not _json_numbers_fine(item, depth + 1):
                return False
        return True

    def members(self, value: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
        """The output dict in schema order (defaults filled), and the names of the fields sent."""
        out: dict[str, Any] = {}
        sent: set[str] = set()
        for field in self.fields:
            if field.key in value:
                out[field.name] = field.node.build(value[field.key])
                sent.add(field.name)
            elif field.default is not None:
                out[field.name] = field.default.get()
        if self.extra == 'allow' and len(sent) != len(value):
            keys = self.keys
            out.update((key, item) for key, item in value.items() if key not in keys)
        return out, sent

    def build(self, value: Any) -> Any:
        return self.members(value)[0]


class _Model(_Node):
    """An instance built as pydantic-core's ``ModelValidator.validate_construct`` does (no ``__init__``)."""

    __slots__ = ('cls', 'fields')

    def __init__(self, cls: type, fields: _Members) -> None:
        self.cls, self.fields = cls, fields

    def check(self, value: Any, depth: int) -> bool:
        return self.fields.check(value, depth)

    def judge(self, value: Any, depth: int, loc: tuple[Any, ...], found: _Found) -> bool:
        return self.fields.judge_as(value, depth, loc, found, 'model_type')

    def build(self, value: Any) -> Any:
        members, sent = self.fields.members(value)
        instance: Any = object.__new__(self.cls)
        object.__setattr__(instance, '__dict__', members)
        object.__setattr__(instance, '__pydantic_extra__', None)
        object.__setattr__(instance, '__pydantic_private__', None)
        object.__setattr__(instance, '__pydantic_fields_set__', sent)
        return instance


class _Ref(_Node):
    """A ``definition-ref``: the definition's node, compiled once (recursive types)."""

    __slots__ = ('target',)

    def __init__(self) -> None:
        self.target: _Node | None = None

    def check(self, value: Any, depth: int) -> bool:
        assert self.target is not None
        return self.target.check(value, depth)

    def judge(self, value: Any, depth: int, loc: tuple[Any, ...], found: _Found) -> bool:
        assert self.target is not None
        return self.target.judge(value, depth, loc, found)

    def build(self, value: Any) -> Any:
        assert self.target is not None
        return self.target.build(value)


# ---------------------------------------------------------------------------------------------- value rules


def _size_fits(size: int, low: int, high: int | None) -> bool:
    return size >= low and (high is None or size <= high)


def _json_numbers_fine(value: Any, depth: int) -> bool:
    """Whether every number in the parsed JSON ``value`` is an int within 64 bits or a finite float."""
    kind = type(value)
    if kind is int:
        return bool(INT64_MIN <= value <= INT64_MAX)
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return depth < MAX_DEPTH and all(_json_numbers_fine(item, depth + 1) for item in value)
    if kind is dict:
        return depth < MAX_DEPTH and all(_json_numbers_fine(item, depth + 1) for item in value.values())
    return True


def _no_duplicate_keys(text: str, value: dict[str, Any]) -> bool:
    r"""Whether the object members of ``text`` are exactly those of its parsed ``value`` (no key given twice).

    Every ``:`` of the text either ends a member's key or stands in a string, as itself (only
    ``\u003a`` writes one otherwise, refused here); so the text has no duplicate key exactly when its
    count of ``:`` is the count of members plus the ``:`` inside the parsed strings.
    """
    if '\\u003a' in text or '\\u003A' in text:
        return False
    return text.count(':') == _colons(value)


def _takes_none(node: _Node) -> bool:
    """Whether ``node`` takes JSON ``null`` (nullable, none, any, a literal or enum with None), following refs."""
    while isinstance(node, _Ref):
        assert node.target is not None
        node = node.target
    if isinstance(node, _Lookup):
        return (type(None), None) in node.table
    return isinstance(node, _Nullable | _None | _Any)


def _repeats_a_key(text: str) -> bool:
    """Whether an object of ``text`` (strict JSON) has a key twice (pydantic then sees both pairs)."""
    if _no_duplicate_keys(text, parse_arguments(text)):
        return False

    def pairs(members: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({key for key, _ in members}) != len(members):
            raise _Unsure('repeated key')
        return dict(members)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except _Unsure:
        return True
    return False


def _no_digit(text: str) -> bool:
    """Whether ``text`` (short enough to be judged) has no ASCII digit: no number parse of pydantic takes it."""
    return len(text) <= _PARSED_LENGTH and not any('0' <= c <= '9' for c in text)


def _colons(value: Any) -> int:
    kind = type(value)
    if kind is str:
        return int(value.count(':'))
    if kind is list:
        return sum(_colons(item) for item in value)
    if kind is dict:
        return len(value) + sum(int(key.count(':')) + _colons(item) for key, item in value.items())
    return 0


def _numbers_fine(value: Any) -> bool:
    """Whether every number in a default (any Python value) surely follows the numbers rule (:func:`numbers_fine`)."""
    import pydantic  # loaded already (the schema came from it); not at import: TOOLWEAVE_PURE=1 imports this module

    return numbers_fine(value, pydantic.BaseModel, enum.Enum)


def _unhashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return True
    return False


# ---------------------------------------------------------------------------------------------- compiler


def _keys(node: Mapping[str, Any], allowed: frozenset[str] | set[str]) -> None:
    """Refuse a node that is not an exact ``dict`` (as the core) or has a key outside ``allowed`` (and the common ones)."""
    if type(node) is not dict or any(key not in allowed and key not in _COMMON for key in node):
        raise _Unsure(node)


def _length(node: Mapping[str, Any], key: str, default: int | None) -> Any:
    value = node.get(key, default)
    if value is not None and (type(value) is not int or value < 0):
        raise _Unsure(key)
    return value


def _is_int64(value: Any) -> bool:
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def _is_exact_float(value: Any) -> bool:
    """A bound a float compares with as pydantic does (as a double): a finite float, or an int a double holds."""
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is int and -(2**53) <= value <= 2**53


def _checked_config(config: Any) -> Mapping[str, Any]:
    if config is None:
        return {}
    if type(config) is not dict:
        raise _Unsure('config')
    for key, value in config.items():
        if key in _CONFIG_DEFAULTS:
            if value != _CONFIG_DEFAULTS[key] or type(value) is not bool:
                raise _Unsure(key)
        elif key not in _CONFIG_FREE:
            raise _Unsure(key)
    return config


def _extra(node: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """``ExtraBehavior::from_schema_or_config`` (``build_tools.rs``): the node's, else the config's, else ignore."""
    extra = node.get('extra_behavior') or config.get('extra_fields_behavior') or 'ignore'
    if extra not in ('forbid', 'ignore', 'allow') or node.get('extras_schema') is not None:
        raise _Unsure('extra')
    return str(extra)


def _literal_table(expected: list[Any]) -> dict[tuple[type, Any], Any]:
    """``LiteralLookup`` (``literal.rs``) emulated for the JSON scalars an expected value stands for.

    Keys are ``(JSON type, value)`` for each expected ``bool``/``int``/``str``/``None`` and each enum
    member with an exact ``int``/``str`` value; values are what pydantic returns for that JSON value.
    """
    bools: dict[bool, int] = {}
    ints: dict[int, int] = {}
    strs: dict[str, int] = {}
    objects: dict[Any, int] = {}
    primitives: dict[Any, int] = {}
    for index, item in enumerate(expected):
        if type(item) is bool:
            bools[item] = primitives[item] = index
        if _is_int64(item):
            ints[item] = primitives[item] = index
        elif type(item) is str:
            strs[item] = primitives[item] = index
        else:
            objects[item] = index  # TypeError (unhashable): pydantic compares them one by one; not here
    table: dict[tuple[type, Any], Any] = {}
    for item in expected:
        if type(item) is bool:
            table[bool, item] = expected[bools[item]]
            continue
        scalar = item.value if isinstance(item, enum.Enum) else item
        if not (_is_int64(scalar) or type(scalar) is str or scalar is None):
            continue
        first: dict[Any, int] = ints if type(scalar) is int else strs if type(scalar) is str else {}
        for lookup in (first, objects, primitives):
            found = lookup.get(scalar)
            if found is not None:
                table[type(scalar), scalar] = expected[found]
                break
    return table


def _enum_table(node: Mapping[str, Any]) -> dict[tuple[type, Any], Any]:
    """``enum_.rs`` with ``sub_type`` str or int: a member's value (that JSON type only) -> the member."""
    cls, members, sub_type = node['cls'], node['members'], node.get('sub_type')
    kind: type | None = {'str': str, 'int': int}.get(sub_type)  # type: ignore[arg-type]
    if kind is None or 'missing' in node or not isinstance(cls, type) or not members:
        raise _Unsure('enum')
    table: dict[tuple[type, Any], Any] = {}
    for member in members:
        value = getattr(member, 'value', None)
        if not isinstance(member, cls) or type(value) is not kind:
            raise _Unsure('enum member')
        if kind is int and not _is_int64(value):
            continue
        table[kind, value] = member
    return table


def _chain_ends(node: _Node) -> None:
    """Refuse a definition that is only itself through ``definition-ref``/``nullable`` (no value would end it)."""
    seen: set[int] = set()
    while isinstance(node, _Ref | _Nullable):
        if id(node) in seen:
            raise _Unsure('a definition that is only itself')
        seen.add(id(node))
        node = node.target if isinstance(node, _Ref) else node.inner  # type: ignore[assignment]


class _Compiler:
    """Core schema -> plan nodes; definitions compiled once into :class:`_Ref` targets."""

    def __init__(self) -> None:
        self.definitions: dict[str, Mapping[str, Any]] = {}
        self.refs: dict[str, _Ref] = {}
        self.counts_pairs = False
        self.typed_dict_factories = False

    def finish(self) -> None:
        """Compile every definition referred to (more may be referred to while doing so)."""
        done: set[str] = set()
        while len(done) < len(self.refs):
            for name, ref in list(self.refs.items()):
                if name not in done:
                    done.add(name)
                    ref.target = self.node(self.definitions[name], None)
        for ref in self.refs.values():
            _chain_ends(ref)

    def node(self, node: Mapping[str, Any], config: Mapping[str, Any] | None) -> _Node:  # noqa: C901 - one dispatch
        if type(node) is not dict:  # as the core: a Mapping that is not a dict (deferred MockCoreSchema)
            raise _Unsure('not a dict')
        kind = node['type']
        if kind == 'str':
            _keys(node, {'min_length', 'max_length'})
            return _Str(_length(node, 'min_length', 0), _length(node, 'max_length', None))
        if kind == 'int':
            _keys(node, {'ge', 'gt', 'le', 'lt', 'multiple_of'})
            multiple_of = node.get('multiple_of')
            if multiple_of is not None and (not _is_int64(multiple_of) or multiple_of == 0):
                raise _Unsure('multiple_of')
            return _Int(_Bounds(node, lambda bound: type(bound) is int), multiple_of)
        if kind == 'float':
            _keys(node, {'ge', 'gt', 'le', 'lt', 'allow_inf_nan'})
            return _Float(_Bounds(node, _is_exact_float))
        if kind in ('bool', 'none', 'any'):
            _keys(node, set())
            return {'bool': _Bool, 'none': _None, 'any': _Any}[kind]()
        if kind == 'nullable':
            _keys(node, {'schema'})
            return _Nullable(self.node(node['schema'], config))
        if kind == 'literal':
            _keys(node, {'expected'})
            return _Lookup(_literal_table(list(node['expected'])))
        if kind == 'enum':
            _keys(node, {'cls', 'members', 'sub_type'})
            return _Lookup(_enum_table(node))
        if kind == 'list':
            _keys(node, {'items_schema', 'min_length', 'max_length', 'fail_fast'})
            item = self.node(node['items_schema'], config) if 'items_schema' in node else _Any()
            return _List(item, _length(node, 'min_length', 0), _length(node, 'max_length', None))
        if kind == 'dict':
            return self.dict(node, config)
        if kind == 'typed-dict':
            return self.typed_dict(node)
        if kind == 'model':
            return self.model(node)
        if kind == 'definitions':
            _keys(node, {'schema', 'definitions'})
            for definition in node['definitions']:
                self.definitions[definition['ref']] = definition
            return self.node(node['schema'], config)
        if kind == 'definition-ref':
            _keys(node, {'schema_ref'})
            name = node['schema_ref']
            if name not in self.definitions:
                raise _Unsure(name)
            return self.refs.setdefault(name, _Ref())
        raise _Unsure(kind)

    def dict(self, node: Mapping[str, Any], config: Mapping[str, Any] | None) -> _Node:
        _keys(node, {'keys_schema', 'values_schema', 'min_length', 'max_length', 'fail_fast'})
        keys = self.node(node['keys_schema'], config) if 'keys_schema' in node else _Str(0, None)
        if not isinstance(keys, _Str) or keys.min_length or keys.max_length is not None:
            raise _Unsure('keys_schema')
        values = self.node(node['values_schema'], config) if 'values_schema' in node else _Any()
        if not isinstance(values, _Any):
            self.counts_pairs = True  # pydantic validates each pair of a duplicate key, not only the last
        return _Dict(values, _length(node, 'min_length', 0), _length(node, 'max_length', None))

    def typed_dict(self, node: Mapping[str, Any]) -> _Node:
        _keys(
            node, {'fields', 'cls', 'cls_name', 'computed_fields', 'extras_schema', 'extra_behavior', 'total', 'config'}
        )
        config = _checked_config(node.get('config'))  # typed dicts use their own config only
        total = node.get('total', config.get('typed_dict_total', True))
        fields = []
        for name, field in node['fields'].items():
            _keys(field, _FIELD_KEYS | {'required'})
            required = field.get('required', total)
            fields.append(self.field(name, field, config, bool(required), typed_dict=True))
        return _Members(tuple(fields), _extra(node, config))

    def model(self, node: Mapping[str, Any]) -> _Node:
        _keys(node, _MODEL_KEYS)
        cls = node['cls']
        if node.get('custom_init') or node.get('root_model') or node.get('post_init') is not None:
            raise _Unsure('model')
        if not isinstance(cls, type) or cls.__new__ is not object.__new__:  # type: ignore[comparison-overlap]
            raise _Unsure('cls')
        config = _checked_config(node.get('config'))  # models use their own config only
        inner = node['schema']
        _keys(inner, {'fields', 'model_name', 'computed_fields', 'extra_behavior', 'extras_schema'})
        if inner['type'] != 'model-fields' or _extra(inner, config) == 'allow':
            raise _Unsure('model-fields')
        fields = []
        for name, field in inner['fields'].items():
            _keys(field, _FIELD_KEYS | {'frozen'})
            fields.append(self.field(name, field, config, True, typed_dict=False))
        return _Model(cls, _Members(tuple(fields), _extra(inner, config)))

    def field(
        self, name: str, field: Mapping[str, Any], config: Mapping[str, Any], required: bool, *, typed_dict: bool
    ) -> _Field:
        key = field.get('validation_alias', name)
        if type(name) is not str or type(key) is not str:
            raise _Unsure('validation_alias')
        schema = field['schema']
        default = None
        if schema['type'] == 'default':
            _keys(schema, _DEFAULT_KEYS)
            if schema.get('on_error', 'raise') != 'raise' or schema.get('validate_default'):
                raise _Unsure('default')
            if 'default' in schema or 'default_factory' in schema:
                default = _Default(schema)
                self.typed_dict_factories |= typed_dict and default.factory is not None
            schema = schema['schema']
        return _Field(name, key, self.node(schema, config), required, default)
