"""Arguments of JSON-native parameters, validated by the core's compiled JSON Schema (no pydantic on the way).

For a function whose parameters are all JSON-native (``str``, ``bool``, ``None``, ``int``,
``float``, ``Optional`` of those, ``list``/``dict[str, ...]`` of them, TypedDicts of them, ``Literal``
of strings, enums whose values are all strings), the argument text is parsed and validated in one
step by :class:`toolweave._native.SchemaValidator` against a schema built here from the types, then
turned into exactly what pydantic's lax JSON validation would have produced:

* an ``int`` parameter sent as ``3.0`` becomes ``3`` (JSON Schema counts ``3.0`` as an integer; pydantic
  takes a float with no fractional part), a ``float`` one sent as ``3`` becomes ``3.0``;
* an enum's value becomes its member; lists, dicts, strings and booleans stay as parsed.

The schema accepts only what pydantic accepts unchanged or with the conversions above: every other
input (a string ``"3"`` for an ``int``, an extra key in a TypedDict, a missing key, text that is not
strict JSON, ``NaN``, an integer beyond 64 bits, a non-finite float...) is refused here, and the
caller's pydantic path decides as it always did, so its values and error texts stay what they were
(``tests/tools/test_json_native_binding.py`` proves the two paths equal over generated signatures and
documents). Integers are bounded to the signed 64-bit range (the schema's bounds; a ``float``
parameter's integer by its conversion) and the core refuses non-finite floats, so an accepted value
needs no number walk (:mod:`toolweave.tools._numbers`).
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions
from pydantic.fields import FieldInfo

from toolweave._native import SchemaValidator
from toolweave.exceptions import SchemaValidationError, ToolArgumentsError
from toolweave.tools._numbers import INT64_MAX, INT64_MIN
from toolweave.tools.param import ToolParam
from toolweave.tools.schema import FunctionSchema

__all__ = ['NativeArguments', 'native_arguments']

Converter = Callable[[Any], Any]
"""Parsed JSON value -> the value pydantic would have produced; raises :class:`_Refused` when pydantic must decide."""


class _Refused(Exception):
    """The value is valid JSON Schema but pydantic must decide (an integral float beyond 64 bits)."""


class _Ineligible(Exception):
    """The type is not JSON-native: the function keeps the pydantic path."""


@dataclass(frozen=True)
class NativeArguments:
    """The compiled schema and value conversion of one function's argument object.

    Attributes:
        validator: Parses and validates the argument text (a JSON object, parameters as properties,
            no other keys).
        convert: Turns the parsed object into the parameter values in place, ``None`` when nothing
            needs converting.
    """

    validator: SchemaValidator
    convert: Converter | None

    def values(self, text: str) -> tuple[dict[str, Any] | None, bool]:
        """``(values, strict_json_object)``: the parameter values sent, or ``None`` when pydantic must decide.

        ``strict_json_object`` says the text was read as a strict JSON object whose numbers JSON
        Schema can hold (so the caller need not parse it again to know); it is ``False`` when unknown.
        """
        try:
            value: dict[str, Any] = self.validator.validate_json(text)
        except SchemaValidationError:
            return None, True
        except (ToolArgumentsError, ValueError):
            return None, False
        if self.convert is None:
            return value, True
        try:
            return self.convert(value), True
        except _Refused:
            return None, True


def native_arguments(schema: FunctionSchema) -> NativeArguments | None:
    """The JSON-native binding of ``schema``'s parameters, ``None`` when one of their types is not JSON-native."""
    if schema.arguments is None:
        return None
    properties: dict[str, Any] = {}
    converters: dict[str, Converter] = {}
    try:
        for param in schema.parameters:
            properties[param.name], converter = _plan(param.annotation)
            if converter is not None:
                converters[param.name] = converter
    except _Ineligible:
        return None
    root = {
        'type': 'object',
        'properties': properties,
        'required': [p.name for p in schema.parameters if p.required],
        'additionalProperties': False,
    }
    return NativeArguments(SchemaValidator(root), _object_converter(converters) if converters else None)


def _plan(annotation: Any) -> tuple[dict[str, Any], Converter | None]:
    """The JSON Schema that accepts what ``annotation`` takes unchanged or convertibly, and the conversion.

    Raises:
        _Ineligible: the type (or a constraint on it) is not one this module reproduces exactly.
    """
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *extras = get_args(annotation)
        if not all(_only_describes(extra) for extra in extras):
            raise _Ineligible
        return _plan(inner)
    if annotation is str:
        return {'type': 'string'}, None
    if annotation is bool:
        return {'type': 'boolean'}, None
    if annotation is None or annotation is type(None):
        return {'type': 'null'}, None
    if annotation is int:
        return {'type': 'integer', 'minimum': INT64_MIN, 'maximum': INT64_MAX}, _to_int
    if annotation is float:
        return {'type': 'number'}, _to_float
    if origin is Union or origin is types.UnionType:
        return _optional(get_args(annotation))
    if origin is Literal:
        return _literal(get_args(annotation))
    if origin is list:
        return _list(get_args(annotation))
    if origin is dict:
        return _dict(get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum(annotation)
    if typing_extensions.is_typeddict(annotation):
        return _typed_dict(annotation)
    raise _Ineligible


def _only_describes(extra: Any) -> bool:
    """Whether ``Annotated`` metadata leaves validation alone: a ``ToolParam``, a ``Field`` with only a description."""
    if isinstance(extra, ToolParam):
        return True
    return isinstance(extra, FieldInfo) and set(extra._attributes_set) <= {'description'} and not extra.metadata


def _optional(choices: tuple[Any, ...]) -> tuple[dict[str, Any], Converter | None]:
    """``X | None`` only: pydantic's smart union picks among other choices by rules not reproduced here."""
    others = [choice for choice in choices if choice is not type(None)]
    if len(others) != 1 or len(choices) != 2:
        raise _Ineligible
    schema, convert = _plan(others[0])
    if convert is None:
        return {'anyOf': [{'type': 'null'}, schema]}, None
    inner = convert

    def optional(value: Any) -> Any:
        return None if value is None else inner(value)

    return {'anyOf': [{'type': 'null'}, schema]}, optional


def _literal(values: tuple[Any, ...]) -> tuple[dict[str, Any], Converter | None]:
    """``Literal`` of plain strings (JSON Schema's ``enum`` would match ``1.0`` to ``1``; pydantic's literal may not)."""
    if not values or not all(type(value) is str for value in values):
        raise _Ineligible
    return {'enum': list(values)}, None


def _enum(cls: type[enum.Enum]) -> tuple[dict[str, Any], Converter | None]:
    """An enum whose values are all plain strings: the value becomes its member (``cls(value)``)."""
    if issubclass(cls, enum.Flag):
        raise _Ineligible
    members = {member.value: member for member in cls}
    if not members or not all(type(value) is str for value in members):
        raise _Ineligible
    return {'enum': list(members)}, members.__getitem__


def _list(args: tuple[Any, ...]) -> tuple[dict[str, Any], Converter | None]:
    if len(args) != 1:
        raise _Ineligible
    schema, convert = _plan(args[0])
    if convert is None:
        return {'type': 'array', 'items': schema}, None
    inner = convert

    def each(value: list[Any]) -> list[Any]:
        return [inner(item) for item in value]

    return {'type': 'array', 'items': schema}, each


def _dict(args: tuple[Any, ...]) -> tuple[dict[str, Any], Converter | None]:
    if len(args) != 2 or args[0] is not str:
        raise _Ineligible
    schema, convert = _plan(args[1])
    if convert is None:
        return {'type': 'object', 'additionalProperties': schema}, None
    inner = convert

    def each(value: dict[str, Any]) -> dict[str, Any]:
        return {key: inner(item) for key, item in value.items()}

    return {'type': 'object', 'additionalProperties': schema}, each


def _typed_dict(cls: Any) -> tuple[dict[str, Any], Converter | None]:
    """A plain TypedDict (no pydantic config of its own, not generic): its keys as properties, no others.

    pydantic drops unknown keys by default: the schema refuses them, and pydantic decides.
    """
    if getattr(cls, '__pydantic_config__', None) is not None or len(getattr(cls, '__parameters__', ())) > 0:
        raise _Ineligible
    hints = typing.get_type_hints(cls, include_extras=True)
    properties: dict[str, Any] = {}
    converters: dict[str, Converter] = {}
    required: list[str] = []
    for name, hint in hints.items():
        properties[name], converter = _plan(_field_type(hint))
        if converter is not None:
            converters[name] = converter
        if _is_required(name, hint, cls.__required_keys__):
            required.append(name)
    schema = {'type': 'object', 'properties': properties, 'required': required, 'additionalProperties': False}
    return schema, _object_converter(converters) if converters else None


def _is_required(name: str, hint: Any, required_keys: frozenset[str]) -> bool:
    """Whether a TypedDict key is required, by pydantic's rule.

    An explicit ``Required``/``NotRequired`` wins, else ``__required_keys__`` (which misses the wrappers
    of string annotations).
    """
    origin = get_origin(hint)
    if origin is typing_extensions.Required:
        return True
    if origin is typing_extensions.NotRequired:
        return False
    return name in required_keys


def _field_type(hint: Any) -> Any:
    """A TypedDict field's type without its ``Required``/``NotRequired`` wrapper (``__required_keys__`` says which)."""
    origin = get_origin(hint)
    if origin in (typing_extensions.Required, typing_extensions.NotRequired):
        return _field_type(get_args(hint)[0])
    if origin is Annotated and get_origin(get_args(hint)[0]) in (
        typing_extensions.Required,
        typing_extensions.NotRequired,
    ):
        raise _Ineligible  # which wrapper pydantic reads through is not reproduced here
    if getattr(typing_extensions, 'ReadOnly', None) is not None and origin is typing_extensions.ReadOnly:
        raise _Ineligible
    return hint


def _object_converter(converters: Mapping[str, Converter]) -> Converter:
    """Converts the named members of a parsed object in place (members left out stay out)."""
    pairs = tuple(converters.items())

    def convert(value: dict[str, Any]) -> dict[str, Any]:
        for name, inner in pairs:
            if name in value:
                value[name] = inner(value[name])
        return value

    return convert


def _to_int(value: Any) -> int:
    """``3.0`` -> ``3`` as pydantic's lax int; an integral float beyond 64 bits is pydantic's to refuse."""
    if type(value) is int:
        return value
    number = int(value)
    if not INT64_MIN <= number <= INT64_MAX:
        raise _Refused
    return number


def _to_float(value: Any) -> float:
    """``3`` -> ``3.0`` as pydantic's float; an integer beyond 64 bits is pydantic's to convert (or not)."""
    if type(value) is float:
        return value
    if not INT64_MIN <= value <= INT64_MAX:
        raise _Refused
    return float(value)
