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
import itertools
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

    def values(self, text: str) -> dict[str, Any] | None:
        """The parameter values sent, or ``None`` when pydantic must decide."""
        try:
            value: dict[str, Any] = self.validator.validate_json(text)
        except (SchemaValidationError, ToolArgumentsError, ValueError):
            return None
        if self.convert is None:
            return value
        try:
            converted: dict[str, Any] = self.convert(value)
        except _Refused:
            return None
        return converted


def native_arguments(schema: FunctionSchema) -> NativeArguments | None:
    """The JSON-native binding of ``schema``'s parameters, ``None`` when one of their types is not JSON-native."""
    if schema.arguments is None:
        return None
    compiler = _Compiler()
    fields = {p.name: (p.annotation, p.required) for p in schema.parameters}
    try:
        root, convert = compiler.object(fields)
        return NativeArguments(SchemaValidator(root), None if convert is None else compiler.function(convert))
    except (_Ineligible, RecursionError, SyntaxError):  # a recursive or too deeply nested type: pydantic binds it
        return None


@dataclass(frozen=True)
class _Conversion:
    """How the generated code converts one value held in a variable.

    Attributes:
        lines: ``(variable, target)`` -> statements converting the variable's value: a new value is
            stored into ``target`` (an assignable expression); containers of objects are converted in
            place and never assign (their ``target`` may be ``None``).
        expression: ``variable`` -> an expression of the converted value, ``None`` for in-place kinds.
        call: The name of a one-argument function that converts (for ``map``), if there is one.
    """

    lines: Callable[[str, str | None], list[str]]
    expression: Callable[[str], str] | None = None
    call: str | None = None


def _indent(lines: list[str]) -> list[str]:
    return ['    ' + line for line in lines]


def _number(kind: str, convert: str) -> _Conversion:
    """An ``int``/``float`` value: kept when it already has the type, else converted by ``convert``."""
    return _Conversion(
        lambda x, target: [f'if type({x}) is not {kind}:', f'    {target} = {convert}({x})'],
        lambda x: f'({x} if type({x}) is {kind} else {convert}({x}))',
    )


_PLAIN: dict[Any, str] = {str: 'string', bool: 'boolean', None: 'null', type(None): 'null'}
"""Types whose JSON values pydantic keeps as they are (only these JSON types: the schema refuses the rest)."""
_MAX_DEPTH = 8
"""Deepest nesting of containers compiled (Python refuses more than 20 nested blocks); deeper types go to pydantic."""


class _Compiler:
    """Builds the schema of a type and, where values need converting, the source of one converting function.

    The conversion of a whole argument object is generated as Python source and compiled once: one
    function with the type checks inline, loops over lists of objects, ``map`` over lists of enum
    values. (A closure per value costs a call for every converted number of every list item, about
    twice the time.)
    """

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {'_to_int': _to_int, '_to_float': _to_float, '_absent': _ABSENT}
        self._names = itertools.count()
        self._depth = 0

    def name(self, prefix: str, value: Any = None) -> str:
        """A new name (bound to ``value`` in the generated code's namespace when given)."""
        name = f'{prefix}{next(self._names)}'
        if value is not None:
            self.namespace[name] = value
        return name

    def function(self, conversion: _Conversion) -> Converter:
        """The compiled converter of a whole argument object (converted in place and returned)."""
        source = '\n'.join(['def convert(value):', *_indent(conversion.lines('value', None)), '    return value', ''])
        exec(compile(source, '<toolweave arguments>', 'exec'), self.namespace)  # noqa: S102 - our own generated code
        converter: Converter = self.namespace['convert']
        return converter

    def plan(self, annotation: Any) -> tuple[dict[str, Any], _Conversion | None]:
        """The JSON Schema that accepts what ``annotation`` takes unchanged or convertibly, and its conversion.

        Raises:
            _Ineligible: the type (or a constraint on it) is not one this module reproduces exactly.
        """
        origin = get_origin(annotation)
        if origin is Annotated:
            inner, *extras = get_args(annotation)
            if not all(_only_describes(extra) for extra in extras):
                raise _Ineligible
            return self.plan(inner)
        if annotation is None or (isinstance(annotation, type) and annotation in _PLAIN):
            return {'type': _PLAIN[annotation]}, None
        if annotation is int:
            return {'type': 'integer', 'minimum': INT64_MIN, 'maximum': INT64_MAX}, _number('int', '_to_int')
        if annotation is float:
            return {'type': 'number'}, _number('float', '_to_float')
        if origin is Union or origin is types.UnionType:
            return self.optional(get_args(annotation))
        if origin is Literal:
            return _literal(get_args(annotation))
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            return self.enum(annotation)
        self._depth += 1
        try:
            if self._depth > _MAX_DEPTH:
                raise _Ineligible
            if origin is list:
                return self.list_of(get_args(annotation))
            if origin is dict:
                return self.dict_of(get_args(annotation))
            if typing_extensions.is_typeddict(annotation):
                return self.typed_dict(annotation)
        finally:
            self._depth -= 1
        raise _Ineligible

    def optional(self, choices: tuple[Any, ...]) -> tuple[dict[str, Any], _Conversion | None]:
        """``X | None`` only: pydantic's smart union picks among other choices by rules not reproduced here."""
        others = [choice for choice in choices if choice is not type(None)]
        if len(others) != 1 or len(choices) != 2:
            raise _Ineligible
        schema, inner = self.plan(others[0])
        schema = {'anyOf': [{'type': 'null'}, schema]}
        if inner is None:
            return schema, None
        expression = inner.expression
        return schema, _Conversion(
            lambda x, target: [f'if {x} is not None:', *_indent(inner.lines(x, target))],
            None if expression is None else lambda x: f'(None if {x} is None else {expression(x)})',
        )

    def enum(self, cls: type[enum.Enum]) -> tuple[dict[str, Any], _Conversion | None]:
        """An enum whose values are all plain strings: the value becomes its member (as ``cls(value)``)."""
        if issubclass(cls, enum.Flag):
            raise _Ineligible
        members = {member.value: member for member in cls}
        if not members or not all(type(value) is str for value in members):
            raise _Ineligible
        name = self.name('_member', members.__getitem__)
        return {'enum': list(members)}, _Conversion(
            lambda x, target: [f'{target} = {name}({x})'], lambda x: f'{name}({x})', name
        )

    def list_of(self, args: tuple[Any, ...]) -> tuple[dict[str, Any], _Conversion | None]:
        if len(args) != 1:
            raise _Ineligible
        schema, inner = self.plan(args[0])
        schema = {'type': 'array', 'items': schema}
        if inner is None:
            return schema, None
        item = self.name('item')
        if inner.call is not None:
            call = inner.call
            return schema, _Conversion(
                lambda x, target: [f'{target} = list(map({call}, {x}))'], lambda x: f'list(map({call}, {x}))'
            )
        if inner.expression is not None:
            each = inner.expression
            return schema, _Conversion(
                lambda x, target: [f'{target} = [{each(item)} for {item} in {x}]'],
                lambda x: f'[{each(item)} for {item} in {x}]',
            )
        return schema, _Conversion(lambda x, target: [f'for {item} in {x}:', *_indent(inner.lines(item, None))])

    def dict_of(self, args: tuple[Any, ...]) -> tuple[dict[str, Any], _Conversion | None]:
        if len(args) != 2 or args[0] is not str:
            raise _Ineligible
        schema, inner = self.plan(args[1])
        schema = {'type': 'object', 'additionalProperties': schema}
        if inner is None:
            return schema, None
        key, item = self.name('key'), self.name('item')
        if inner.expression is not None:
            each = inner.expression
            comprehension = f'{{{key}: {each(item)} for {key}, {item} in {{x}}.items()}}'
            return schema, _Conversion(
                lambda x, target: [f'{target} = ' + comprehension.replace('{x}', x)],
                lambda x: comprehension.replace('{x}', x),
            )
        return schema, _Conversion(
            lambda x, target: [f'for {item} in {x}.values():', *_indent(inner.lines(item, None))]
        )

    def typed_dict(self, cls: Any) -> tuple[dict[str, Any], _Conversion | None]:
        """A plain TypedDict (no pydantic config of its own, not generic): its keys as properties, no others.

        Unknown keys are refused: pydantic decides about them (the arguments' ``extra='forbid'`` reaches
        nested TypedDicts).
        """
        if getattr(cls, '__pydantic_config__', None) is not None or len(getattr(cls, '__parameters__', ())) > 0:
            raise _Ineligible
        hints = typing.get_type_hints(cls, include_extras=True)
        required = cls.__required_keys__
        return self.object(
            {name: (_field_type(hint), _is_required(name, hint, required)) for name, hint in hints.items()}
        )

    def object(self, fields: Mapping[str, tuple[Any, bool]]) -> tuple[dict[str, Any], _Conversion | None]:
        """An object of the named ``(type, required)`` members and no others, converted in place."""
        properties: dict[str, Any] = {}
        members: list[tuple[str, bool, str, _Conversion]] = []
        for name, (annotation, required) in fields.items():
            properties[name], inner = self.plan(annotation)
            if inner is not None:
                members.append((name, required, self.name('member'), inner))
        required_names = [name for name, (_, required) in fields.items() if required]
        schema = {'type': 'object', 'properties': properties, 'required': required_names, 'additionalProperties': False}
        if not members:
            return schema, None

        def lines(x: str, target: str | None) -> list[str]:
            out: list[str] = []
            for name, required, member, inner in members:
                if required:
                    out += [f'{member} = {x}[{name!r}]', *inner.lines(member, f'{x}[{name!r}]')]
                else:
                    out += [f'{member} = {x}.get({name!r}, _absent)', f'if {member} is not _absent:']
                    out += _indent(inner.lines(member, f'{x}[{name!r}]'))
            return out

        return schema, _Conversion(lines)


_ABSENT = object()


def _only_describes(extra: Any) -> bool:
    """Whether ``Annotated`` metadata leaves validation alone: a ``ToolParam``, a ``Field`` with only a description."""
    if isinstance(extra, ToolParam):
        return True
    return isinstance(extra, FieldInfo) and set(extra._attributes_set) <= {'description'} and not extra.metadata


def _literal(values: tuple[Any, ...]) -> tuple[dict[str, Any], _Conversion | None]:
    """``Literal`` of plain strings (JSON Schema's ``enum`` would match ``1.0`` to ``1``; pydantic's literal may not)."""
    if not values or not all(type(value) is str for value in values):
        raise _Ineligible
    return {'enum': list(values)}, None


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
