"""Input JSON Schema of a Python function (Spring AI ``JsonSchemaGenerator.generateForMethodInput``).

Each parameter's type goes through pydantic's JSON Schema generator, in one generation from the
arguments schema ``TypeAdapter(fn)`` uses (the one-step argument validator, a TypedDict adapter, is
built on first use, by the tool's first call); the parameter schemas are then assembled into one
object schema by Spring's rules:

* ``{"$schema": 2020-12, "type": "object", "$defs"?, "properties", "required", "additionalProperties": false}``,
  properties in declaration order, ``required`` always present, empty ``$defs`` dropped;
* required, first rule that applies: ``ToolParam(required=...)``; the type admits ``None`` -> not
  required; a default -> not required; else required (``PROPERTY_REQUIRED_BY_DEFAULT``);
* each parameter's ``$defs`` hoisted to the root (identical -> reused, different -> ``Name_2`` ...);
* the top-level ``format`` of each parameter removed, ``additionalProperties: false`` on every
  object node with ``properties`` and none of its own (``dict[str, X]`` keeps its value schema,
  ``dict[str, Any]`` stays open); :class:`SchemaOption` turns this off or upper-cases type names;
* fields of nested pydantic models, dataclasses and TypedDicts follow the same required rule
  (a field whose type admits ``None`` is not required; ``Required``/``NotRequired`` honoured).

The ``$defs`` hoisting and the ``additionalProperties`` walk run in the Rust core
(:mod:`toolweave._native`). A ``ToolContext`` parameter, ``self``/``cls`` and ``*args`` are skipped; ``**kwargs`` is rejected.
Results are cached per function, so a second call is a dictionary lookup.
"""

from __future__ import annotations

import copy
import dataclasses
import decimal
import enum
import functools
import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin

import orjson
import pydantic
import pydantic_core
import typing_extensions
from pydantic import TypeAdapter  # every schema builds one: loaded with this module, not by the first @tool
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticUndefined, core_schema

try:  # pydantic >= 2.12; loaded with this module, not by the first @tool
    from pydantic.experimental.arguments_schema import generate_arguments_schema
except ImportError:  # pragma: no cover - older pydantic: the TypedDict adapter's schema is used
    generate_arguments_schema = None  # type: ignore[assignment]

from toolweave._native import forbid_additional_properties, hoist_defs_to_root, upper_case_type_values
from toolweave.tools.context import ToolContext
from toolweave.tools.param import REQUIRED_MARK, ToolParam

__all__ = [
    'FunctionSchema',
    'ParameterSchema',
    'SchemaOption',
    'clean_generated_schema',
    'ensure_valid_input_schema',
    'function_schema',
    'name_to_description',
]


class SchemaOption(enum.Enum):
    """Options of :func:`function_schema` (Spring AI ``JsonSchemaGenerator.SchemaOption``)."""

    ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT = 'allow_additional_properties_by_default'
    """Do not add ``additionalProperties: false`` (the root and nested objects stay open)."""
    UPPER_CASE_TYPE_VALUES = 'upper_case_type_values'
    """``"type": "string"`` -> ``"STRING"`` (the OpenAPI form of Vertex AI / Gemini)."""


SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'
_MISSING: Any = inspect.Parameter.empty
_INTERNAL_PREFIX = 'x-toolweave-'
_LITERAL_KEYWORDS = frozenset({'enum', 'const', 'default', 'examples'})
"""Keywords whose value is data, not a schema: never rewritten."""
_NAME_MAP_KEYWORDS = frozenset({'properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'})
"""Keywords whose value maps names (a property may be called ``title``) to schemas."""


@dataclass(frozen=True)
class ParameterSchema:
    """One model-visible parameter.

    Attributes:
        name: Parameter name (the JSON property name).
        required: Whether the schema lists it as required.
        default: The Python default, or ``inspect.Parameter.empty``.
        keyword_only: Passed by keyword (after ``*``) rather than position.
        annotation: The resolved type annotation.
        default_field: The pydantic ``Field(...)`` that gives the default (``x: T = Field(default_factory=f)``,
            ``x: Annotated[T, Field(default=3)]``), ``None`` otherwise; see :func:`parameter_default`.
    """

    name: str
    required: bool
    default: Any
    keyword_only: bool
    annotation: Any = Any
    default_field: FieldInfo | None = None

    @functools.cached_property
    def adapter(self) -> pydantic.TypeAdapter[Any]:
        """The pydantic ``TypeAdapter`` that validates and coerces this argument's value, built on first use.

        Only the slow path of a call (arguments that fail the one-step validation) needs it.
        """
        return TypeAdapter(self.annotation)


@dataclass(frozen=True)
class FunctionSchema:
    """The schema side of a function: what the model sees and how to bind its arguments.

    Attributes:
        input_schema: The JSON Schema of the argument object.
        parameters: Model-visible parameters in declaration order.
        context_parameter: Name of the ``ToolContext`` parameter, if any.
        context_position: Where the ``ToolContext`` goes among the positional arguments (the count of
            parameters declared before it), ``None`` when it is keyword-only or absent.
        summary: Docstring summary plus body (``''`` when there is no docstring).
        is_async: Whether the function is a coroutine function.
        build_arguments: Makes :attr:`arguments` (called once, on its first use).
    """

    input_schema: dict[str, Any]
    parameters: tuple[ParameterSchema, ...]
    context_parameter: str | None
    summary: str
    is_async: bool
    context_position: int | None = None
    build_arguments: Callable[[], TypeAdapter[Any] | None] = field(default=lambda: None, repr=False, compare=False)

    @functools.cached_property
    def arguments(self) -> TypeAdapter[Any] | None:
        """Validates the whole argument object in one step (``validate_json`` on the raw text), built on first use.

        A TypedDict of the parameters, unknown keys forbidden; absent optional parameters are left
        out (the caller fills in defaults). ``None`` when pydantic cannot build it. The schema does
        not need it, so a tool that is defined but never called never builds it (about the cost of
        the schema itself, paid by the first call instead).
        """
        return self.build_arguments()

    @functools.cached_property
    def checked_arguments(self) -> pydantic_core.SchemaValidator | None:
        """``arguments`` that also refuses non-finite numbers and integers beyond 64 bits, built on first use.

        A value it accepts needs no :func:`~toolweave.tools._numbers.number_problems` walk; ``None``
        when the parameter types hold numbers a schema cannot bound (see
        :func:`~toolweave.tools._numbers.checked_validator`).
        """
        from toolweave.tools._numbers import checked_validator  # a call's module, not the first @tool's

        return None if self.arguments is None else checked_validator(self.arguments)


def ensure_valid_input_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a raw input schema that every provider accepts (Spring ``JsonSchemaUtils.ensureValidInputSchema``).

    For schemas from outside (``FunctionToolCallback.builder(...).input_schema(...)``, an MCP server's
    tool): ``"type": "object"`` is added when there is no ``type``, and ``"properties": {}`` when the
    type is ``object`` and there are none (a parameterless tool). Nothing else changes.

    >>> ensure_valid_input_schema({'additionalProperties': False})
    {'additionalProperties': False, 'type': 'object', 'properties': {}}

    Raises:
        TypeError: ``schema`` is not a mapping.
    """
    if not isinstance(schema, Mapping):
        raise TypeError(f'input_schema must be a mapping (a JSON Schema object), not {type(schema).__name__}')
    out = dict(schema)
    out.setdefault('type', 'object')
    if out['type'] == 'object':
        out.setdefault('properties', {})
    return out


def clean_generated_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Finish a schema pydantic generated, in place: what only the generator needed goes.

    ``ToolParam(required=...)`` marks of nested fields move into their object's ``required`` list;
    pydantic's ``title`` keywords and every other ``x-toolweave-*`` key are removed (a property
    *named* ``title`` and literal values such as ``default`` stay).

    Returns:
        ``schema`` itself.
    """
    _clean(schema)
    return schema


def _clean(node: Any) -> None:
    """Clean ``node`` (a dict or list) and every dict and list inside it."""
    if isinstance(node, list):
        for item in node:
            if isinstance(item, dict | list):
                _clean(item)
        return
    if isinstance(node.get('properties'), dict):
        _apply_required_marks(node)
    if isinstance(node.get('title'), str):
        del node['title']
    for key in [k for k in node if isinstance(k, str) and k.startswith(_INTERNAL_PREFIX)]:
        del node[key]
    for key, value in node.items():
        if key in _LITERAL_KEYWORDS or not isinstance(value, dict | list):
            continue
        if key in _NAME_MAP_KEYWORDS and isinstance(value, dict):
            for sub in value.values():
                if isinstance(sub, dict | list):
                    _clean(sub)
        else:
            _clean(value)


def _apply_required_marks(node: dict[str, Any]) -> None:
    """Move the ``ToolParam(required=...)`` marks of ``node``'s properties (a dict) into its ``required`` list."""
    properties = node['properties']
    marks = {
        name: prop.pop(REQUIRED_MARK)
        for name, prop in properties.items()
        if isinstance(prop, dict) and REQUIRED_MARK in prop
    }
    if marks:
        current = set(node.get('required', ()))
        node['required'] = [name for name in properties if marks.get(name, name in current)]


def name_to_description(name: str) -> str:
    """``get_weather`` / ``getWeather`` -> ``'get weather'`` (Spring splits camelCase the same way)."""
    spaced = re.sub(r'(?<=[a-z0-9])(?=[A-Z])', ' ', name).replace('_', ' ').replace('-', ' ')
    return ' '.join(spaced.lower().split())


def function_schema(func: Callable[..., Any], options: Collection[SchemaOption] = ()) -> FunctionSchema:
    """The :class:`FunctionSchema` of ``func``, built once per underlying function and options.

    Bound methods share the cache entry of their function (``self`` is skipped), and static or
    class methods are unwrapped, so the cache never keeps instances alive. A second call costs a
    dictionary lookup.

    Args:
        func: A function, bound method, ``staticmethod`` or ``classmethod`` object.
        options: :class:`SchemaOption` values.

    Raises:
        TypeError: ``func`` takes ``**kwargs``, or a parameter's type has no JSON Schema
            (the message names the parameter and the type).
    """
    key = options if isinstance(options, frozenset) else frozenset(options)
    return _function_schema(getattr(func, '__func__', func), key)


class _ToolJsonSchema(GenerateJsonSchema):
    """pydantic's generator with Spring's required rule for fields of models and dataclasses.

    A field with a default is optional (pydantic's rule); a field whose type admits ``None`` is
    optional too (Spring's rule; the callback fills in ``None`` when the model leaves it out).
    TypedDict keys keep what the TypedDict declares (``total``, ``Required``, ``NotRequired``),
    since a TypedDict value without a required key is invalid.
    """

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        if not super().field_is_required(field, total):
            return False
        if field['type'] == 'typed-dict-field':
            return True
        return not _core_admits_none(field['schema'])

    def generate_each(self, inputs: list[tuple[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The ``generate_definitions`` of pydantic in one pass: ``{key: schema}`` and the sorted ``$defs``.

        pydantic generates every input twice (once to collect the definitions, once more after
        naming them); the first pass's schemas, remapped to the final names, are the same, so this
        keeps them. Each input's top-level dict is a copy, as
        pydantic's second pass returns one (a reference pydantic shares with ``$defs`` is changed in
        place later).
        """
        self._mode = 'validation'
        generated = [(key, self.generate_inner(schema)) for key, schema in inputs]
        remapping = self._build_definitions_remapping()
        schemas = {key: dict(remapping.remap_json_schema(schema)) for key, schema in generated}
        defs = remapping.remap_json_schema({'$defs': self.definitions})['$defs']
        self._used = True
        return schemas, self.sort(defs)

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> dict[str, Any]:
        """The schema pydantic gives a field with a default, without a ``default`` that has no JSON form.

        A default holding a non-finite float (``limit: float = math.inf``) would be written as
        ``Infinity``, which is not JSON (the core refuses it, providers reject the request), or as
        ``null`` inside a list; it is not advertised, as pydantic leaves out infinite ``ge``/``le``
        bounds. The field keeps its default when validated.
        """
        json_schema = super().default_schema(schema)
        if 'default' in json_schema and not _has_json_form(self.get_default_value(schema), int_max=_SENT_INT_MAX):
            del json_schema['default']  # checked on the Python value: pydantic writes one inside a list as null
        return json_schema

    def enum_schema(self, schema: core_schema.EnumSchema) -> dict[str, Any]:
        """pydantic's, without the members whose value has no JSON form (see :meth:`literal_schema`)."""
        return _choices_with_json_form(super().enum_schema(schema))

    def literal_schema(self, schema: core_schema.LiteralSchema) -> dict[str, Any]:
        """pydantic's, without the values that have no JSON form (NaN, infinities, integers beyond 64 bits).

        The model cannot send those (the numbers rule would refuse them anyway), and the core and the
        providers refuse a schema holding them.

        Raises:
            TypeError: no value is left.
        """
        return _choices_with_json_form(super().literal_schema(schema))

    def int_schema(self, schema: core_schema.IntSchema) -> dict[str, Any]:
        """pydantic's, with the bounds that have no JSON form dropped (see :func:`_bounds_with_json_form`)."""
        return _bounds_with_json_form(super().int_schema(schema), schema, integer=True)

    def float_schema(self, schema: core_schema.FloatSchema) -> dict[str, Any]:
        """pydantic's, with the bounds that have no JSON form dropped (see :func:`_bounds_with_json_form`)."""
        return _bounds_with_json_form(super().float_schema(schema), schema, integer=False)


_LOWER_BOUNDS = (('ge', 'minimum'), ('gt', 'exclusiveMinimum'))
_UPPER_BOUNDS = (('le', 'maximum'), ('lt', 'exclusiveMaximum'))


def _bounds_with_json_form(json_schema: dict[str, Any], core: Mapping[str, Any], *, integer: bool) -> dict[str, Any]:
    """A number's JSON Schema without bounds the core and the providers cannot hold (NaN, infinities, huge ints).

    A bound that excludes no number the numbers rule accepts (``le=math.inf``, an int ``ge`` below
    ``-2**63``) goes, as pydantic drops infinite ones; a float's integer bound beyond 64 bits is
    written as a float.

    Raises:
        TypeError: a bound leaves no number the tool could receive (``ge=math.inf``, a NaN bound or
            ``multiple_of``, an int ``ge`` beyond ``2**63 - 1``): every call would be refused.
    """
    for core_key, key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, ('multiple_of', 'multipleOf')):
        bound = core.get(core_key)
        if bound is None or isinstance(bound, bool):
            continue
        if integer and isinstance(bound, int) and _excludes_every_int64(core_key, bound):
            raise TypeError(f'{core_key}={bound!r} leaves no 64-bit integer')
        if _has_json_form(bound, int_max=_SENT_INT_MAX):
            continue
        lower = core_key in ('ge', 'gt')
        if not lower and core_key not in ('le', 'lt'):
            raise TypeError(f'multiple_of={bound!r} leaves no finite number')
        if isinstance(bound, int) and not integer:
            json_schema[key] = float(bound)  # within a double's range: a float bound JSON holds
            continue
        nan = isinstance(bound, float) and math.isnan(bound)
        excludes_all = nan or (bound > 0 if lower else bound < 0)  # above (below) every value the tool may get
        if excludes_all:
            raise TypeError(f'{core_key}={bound!r} leaves no {"64-bit integer" if integer else "finite number"}')
        json_schema.pop(key, None)
    return json_schema


def _excludes_every_int64(core_key: str, bound: int) -> bool:
    """Whether an integer bound leaves no signed 64-bit integer (``ge=2**63``, ``gt=2**63 - 1``, ``lt=-2**63``)."""
    if core_key in ('ge', 'gt'):
        return bound > _SENT_INT_MAX or (core_key == 'gt' and bound == _SENT_INT_MAX)
    if core_key in ('le', 'lt'):
        return bound < _JSON_INT_MIN or (core_key == 'lt' and bound == _JSON_INT_MIN)
    return False


def _choices_with_json_form(json_schema: dict[str, Any]) -> dict[str, Any]:
    """``json_schema`` (an enum's or literal's) without ``enum``/``const`` values that have no JSON form.

    Raises:
        TypeError: none is left.
    """
    if 'const' in json_schema and not _has_json_form(json_schema['const'], int_max=_SENT_INT_MAX):
        raise TypeError(f'the value {json_schema["const"]!r} has no JSON form')
    values = json_schema.get('enum')
    if isinstance(values, list) and not all(_has_json_form(value, int_max=_SENT_INT_MAX) for value in values):
        kept = [value for value in values if _has_json_form(value, int_max=_SENT_INT_MAX)]
        if not kept:
            raise TypeError(f'no value of {values!r} has a JSON form')
        json_schema['enum'] = kept
    return json_schema


def _core_admits_none(schema: Any) -> bool:
    for _ in range(16):
        kind = schema.get('type')
        if kind in ('nullable', 'none'):
            return True
        if kind in ('function-after', 'function-before', 'function-wrap') and 'schema' in schema:
            schema = schema['schema']
            continue
        if kind == 'union':
            return any(_core_admits_none(c[0] if isinstance(c, tuple) else c) for c in schema['choices'])
        return False
    return False


@functools.lru_cache(maxsize=4096)
def _function_schema(func: Callable[..., Any], options: frozenset[SchemaOption]) -> FunctionSchema:
    doc_params, summary = _docstring(func)
    hints = typing.get_type_hints(func, include_extras=True)
    declared: list[tuple[inspect.Parameter, Any, _Metadata]] = []
    context_parameter = None
    context_position = None
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, Any)
        if _is_tool_context(annotation):
            context_parameter = param.name
            context_position = None if param.kind is inspect.Parameter.KEYWORD_ONLY else len(declared)
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f'tool {func.__qualname__!r}: **{param.name} is not supported; declare each parameter')
        if param.kind is inspect.Parameter.VAR_POSITIONAL or param.name in ('self', 'cls'):
            continue
        declared.append((param, annotation, _annotated_metadata(annotation)))
    parameters = [_parameter(param, annotation, metadata[0]) for param, annotation, metadata in declared]
    allow_extra = SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT in options
    build_arguments = functools.partial(_arguments_adapter, func, tuple(parameters), allow_extra)
    generated = None
    # With extra properties allowed, a shared generation's `extra` setting would leak into nested models' schemas.
    if not allow_extra:
        typed_dict_only = any(metadata[2] for _, _, metadata in declared)
        generated = None if typed_dict_only else _generated_from_signature(_resolved(func, hints), parameters)
        if generated is None:  # no arguments schema here: the TypedDict adapter's core schema, built now
            arguments = build_arguments()
            build_arguments = functools.partial(_built, arguments)
            generated = _generated_together(arguments, parameters) if arguments is not None else None
    if generated is None:
        generated = _generated_apart(func, parameters)
    schemas, defs = generated
    properties = {
        p.name: _finish_parameter_schema(
            schemas[p.name], _plain_default(param, p.default_field), metadata, doc_params.get(p.name)
        )
        for p, (param, _, metadata) in zip(parameters, declared, strict=True)
    }
    input_schema: dict[str, Any] = {'$schema': SCHEMA_DIALECT, 'type': 'object'}
    if defs:
        input_schema['$defs'] = defs
    input_schema.update(properties=properties, required=[p.name for p in parameters if p.required])
    clean_generated_schema(input_schema)
    try:  # the core's walks refuse NaN, infinities and integers beyond 64 bits (ValueError)
        if not allow_extra:
            input_schema['additionalProperties'] = False
            input_schema = forbid_additional_properties(input_schema)
        elif not _has_json_form(input_schema):
            raise ValueError('NaN, an infinity or an integer beyond 64 bits')  # what that walk would refuse
        if SchemaOption.UPPER_CASE_TYPE_VALUES in options:
            input_schema = upper_case_type_values(input_schema)
    except ValueError as exc:
        raise _no_json_form(func, exc) from exc
    return FunctionSchema(
        input_schema, tuple(parameters), context_parameter, summary, _is_async(func), context_position, build_arguments
    )


def _no_json_form(func: Callable[..., Any], exc: ValueError) -> TypeError:
    """The error of a schema holding NaN, an infinity or an integer beyond 64 bits (the core's ``ValueError``).

    Only the developer's own schema data gets there (``Field(examples=[math.inf])``, ``json_schema_extra``):
    such defaults, bounds and choices are left out while generating.
    """
    return TypeError(
        f'tool {func.__qualname__!r}: its input schema holds a value with no JSON form ({exc}), '
        'in examples or json_schema_extra'
    )


def _built(value: TypeAdapter[Any] | None) -> TypeAdapter[Any] | None:
    return value


def _resolved(func: Callable[..., Any], hints: dict[str, Any]) -> Callable[..., Any]:
    """A copy of the plain function ``func`` annotated with ``hints`` (its resolved annotations), else ``func``.

    pydantic reads the annotations again: with ``from __future__ import annotations`` it would
    evaluate every string a second time. Same code, defaults, names and module, so the same
    signature; a function with ``__wrapped__`` or ``__signature__`` (whose signature is not its
    code's) is given as it is.
    """
    if type(func) is not types.FunctionType or hasattr(func, '__wrapped__') or hasattr(func, '__signature__'):
        return func
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__annotations__ = hints
    copy.__qualname__ = func.__qualname__
    copy.__module__ = func.__module__
    return copy


def _docstring(func: Callable[..., Any]) -> tuple[dict[str, str], str]:
    """The parameter descriptions and the summary (short plus long description) of ``func``'s docstring.

    A function without a docstring is not parsed: ``docstring_parser`` is imported, and its regular
    expressions compiled (about a millisecond), for the first docstring only.
    """
    text = inspect.getdoc(func)
    if not text:
        return {}, ''
    import docstring_parser

    docstring = docstring_parser.parse(text)
    summary = '\n\n'.join(p for p in (docstring.short_description, docstring.long_description) if p)
    return {p.arg_name: p.description or '' for p in docstring.params}, summary


def _arguments_adapter(
    func: Callable[..., Any], parameters: Sequence[ParameterSchema], allow_extra: bool
) -> TypeAdapter[Any] | None:
    """A TypedDict adapter of all parameters, for the one-step ``validate_json`` path (``None`` if unbuildable).

    The TypedDict is total: a required parameter's type stays as it is (``Required[...]`` would say
    the same), an optional one is ``NotRequired[...]``.
    """
    fields = {}
    for p in parameters:
        annotation = _without_aliases(p.annotation)
        fields[p.name] = annotation if p.required else typing_extensions.NotRequired[annotation]
    try:
        make_typed_dict: Any = typing_extensions.TypedDict
        arguments: Any = make_typed_dict(f'{func.__name__}_arguments', fields)
        arguments.__pydantic_config__ = pydantic.ConfigDict(extra='allow' if allow_extra else 'forbid')
        return TypeAdapter(arguments)
    except Exception:  # noqa: BLE001 - the per-parameter path still works; this is only the fast path
        return None


_ALIASES = ('alias', 'alias_priority', 'validation_alias', 'serialization_alias')


def _without_aliases(annotation: Any) -> Any:
    """``annotation`` with the aliases and default of its top-level ``Field(...)`` dropped (``Annotated[int, Field(alias='b')]``).

    pydantic ignores an alias on a function parameter (its ``UnsupportedFieldAttributeWarning``): the schema and
    the per-parameter path name the argument ``a``. On the one-step validator's TypedDict field it would rename
    the key, so that validator took ``b`` where the schema says ``a``. A default (or ``default_factory``) is
    the caller's to fill (:func:`parameter_default`, once per call, after the arguments are checked), so the
    validator leaves the key out as for any optional parameter.
    """
    if get_origin(annotation) is not Annotated:
        return annotation
    base, *metadata = get_args(annotation)
    return Annotated[(base, *(_field_without_aliases(m) if isinstance(m, FieldInfo) else m for m in metadata))]


def _field_without_aliases(info: FieldInfo) -> FieldInfo:
    if all(getattr(info, name) is None for name in _ALIASES) and info.is_required():
        return info
    out = copy.copy(info)
    for name in _ALIASES:
        setattr(out, name, None)
    out.default, out.default_factory = PydanticUndefined, None
    dropped = (*_ALIASES, 'default', 'default_factory')
    out._attributes_set = {k: v for k, v in info._attributes_set.items() if k not in dropped}
    return out


_Generated = tuple[dict[str, dict[str, Any]], dict[str, Any]]
"""Each parameter's generated JSON Schema (refs into the shared ``$defs``) and those ``$defs``."""


def _generated_apart(func: Callable[..., Any], parameters: list[ParameterSchema]) -> _Generated:
    """One pydantic generation per parameter, each ``$defs`` hoisted to the root (``Name_2`` on a clash).

    Raises:
        TypeError: a parameter's type has no JSON Schema (the message names the parameter and the type).
    """
    schemas: dict[str, dict[str, Any]] = {}
    defs: dict[str, Any] = {}
    for p in parameters:
        try:
            schema = p.adapter.json_schema(ref_template=_REF_TEMPLATE, schema_generator=_ToolJsonSchema)
        except (
            pydantic.PydanticSchemaGenerationError,
            pydantic.PydanticUserError,
            pydantic_core.SchemaError,
            TypeError,
        ) as exc:
            raise TypeError(
                f'tool {func.__qualname__!r}: parameter {p.name!r} has type {p.annotation!r} with no JSON Schema: {exc}'
            ) from exc
        try:
            schemas[p.name], defs = hoist_defs_to_root(schema, defs)
        except ValueError as exc:
            raise _no_json_form(func, exc) from exc
    return schemas, defs


def _generated_from_signature(func: Callable[..., Any], parameters: list[ParameterSchema]) -> _Generated | None:
    """:func:`_generated_together`'s result from pydantic's arguments schema of ``func`` (what ``TypeAdapter(func)`` uses).

    Each parameter's core schema is the one its TypedDict field gets: the ``default`` wrapper of a
    parameter with a Python default is dropped (the property's ``default`` is the Python default,
    set afterwards) and so are the JSON Schema updates of its ``Field(...)`` (a TypedDict field keeps
    those on the field, which the property does not read; its description is applied afterwards).
    Cheaper than the TypedDict adapter, and builds no validator. ``None`` (use the TypedDict
    adapter) without ``pydantic.experimental.arguments_schema`` (older pydantic) or when the schema
    has an unexpected shape. Not for a parameter whose ``Field(...)`` has its own default (its
    TypedDict field keeps that default, the arguments schema gives the Python one).
    """
    if generate_arguments_schema is None:
        return None
    names = {p.name for p in parameters}
    try:
        core: Any = generate_arguments_schema(
            func,
            'arguments',
            parameters_callback=lambda _index, name, _annotation: None if name in names else 'skip',
            config=_FORBID_EXTRA,  # the TypedDict's: nested TypedDicts and dataclasses inherit it, as there
        )
        definitions = core['definitions'] if core['type'] == 'definitions' else []
        arguments = core['schema'] if core['type'] == 'definitions' else core
        schemas = {parameter['name']: parameter['schema'] for parameter in arguments['arguments_schema']}
        fields = {p.name: _as_field(schemas[p.name], p) for p in parameters}
    except Exception:  # noqa: BLE001 - the TypedDict adapter's schema decides
        return None
    return _generated_from_fields(fields, definitions)


_FIELD_JSON_UPDATES = ('pydantic_js_updates', 'pydantic_js_extra')
_FORBID_EXTRA = pydantic.ConfigDict(extra='forbid')


def _as_field(schema: dict[str, Any], parameter: ParameterSchema) -> dict[str, Any]:
    """A parameter's core schema in the arguments schema -> the core schema of its TypedDict field.

    Raises:
        ValueError: a parameter with a Python default has no ``default`` wrapper (an unexpected shape).
    """
    if parameter.default is not _MISSING:
        if schema['type'] != 'default':
            raise ValueError(f'parameter {parameter.name!r}: no default schema')
        schema = schema['schema']
    metadata = schema.get('metadata')
    if metadata and any(key in metadata for key in _FIELD_JSON_UPDATES):
        kept = {key: value for key, value in metadata.items() if key not in _FIELD_JSON_UPDATES}
        schema = {**schema, 'metadata': kept}
    return schema


def _generated_together(arguments: TypeAdapter[Any], parameters: list[ParameterSchema]) -> _Generated | None:
    """:func:`_generated_apart`'s result from the arguments adapter's core schema, in one generation.

    Cheaper (one core schema, one generator instead of one per parameter). ``None`` (use
    :func:`_generated_apart`) when the shape is unexpected (see :func:`_generated_from_fields`).
    """
    try:
        core: Any = arguments.core_schema
        definitions = core['definitions'] if core['type'] == 'definitions' else []
        fields = (core['schema'] if core['type'] == 'definitions' else core)['fields']
        schemas = {p.name: fields[p.name]['schema'] for p in parameters}
    except Exception:  # noqa: BLE001 - the per-parameter path decides (and names a type with no schema)
        return None
    return _generated_from_fields(schemas, definitions)


def _generated_from_fields(fields: dict[str, Any], definitions: list[Any]) -> _Generated | None:
    """Each parameter's JSON Schema from its core schema (``fields``, by name), in one generation.

    A parameter whose schema is a reference to a definition that does not refer to itself gets the
    definition inline, as its own generation would give it; definitions nothing refers to any more
    are dropped. ``None`` (use :func:`_generated_apart`) when generation fails or two definitions
    share a class name (pydantic qualifies those; the per-parameter path names them ``Name_2``).
    """
    inputs: list[tuple[str, Any]] = [
        (name, {'type': 'definitions', 'schema': schema, 'definitions': definitions} if definitions else schema)
        for name, schema in fields.items()
    ]
    try:
        generated, generated_defs = _ToolJsonSchema(ref_template=_REF_TEMPLATE).generate_each(inputs)
    except Exception:  # noqa: BLE001 - the per-parameter path decides (and names a type with no schema)
        return None
    defs: dict[str, Any] = {str(name): value for name, value in generated_defs.items()}
    if any('__' in name for name in defs):
        return None
    if not defs:
        return generated, defs
    schemas = {
        key: _inline_own_definition(schema, defs) if '$ref' in schema else schema for key, schema in generated.items()
    }
    return schemas, _referenced(defs, schemas)


_REF_TEMPLATE = '#/$defs/{model}'
_REF_PREFIX = '#/$defs/'


def _inline_own_definition(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``{"$ref": "#/$defs/X", ...}`` -> X's definition (with the other keys), unless X refers to itself."""
    ref = schema.get('$ref')
    if not isinstance(ref, str) or not ref.startswith(_REF_PREFIX) or ref[len(_REF_PREFIX) :] not in defs:
        return schema
    name = ref[len(_REF_PREFIX) :]
    if name in _reachable(defs[name], defs):
        return schema  # recursive: stays a reference, as pydantic leaves it
    rest = {key: value for key, value in schema.items() if key != '$ref'}
    return {**_copied(defs[name]), **rest}


def _copied(node: Any) -> Any:
    """A deep copy of a generated JSON Schema (dicts, lists and JSON scalars), without ``copy.deepcopy``'s bookkeeping."""
    if isinstance(node, dict):
        return {key: _copied(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copied(item) for item in node]
    return node


def _refs(node: Any) -> Iterator[str]:
    """The definition names ``node`` refers to directly (anywhere inside it)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == '$ref' and isinstance(value, str) and value.startswith(_REF_PREFIX):
                yield value[len(_REF_PREFIX) :]
            elif key not in _LITERAL_KEYWORDS:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _reachable(node: Any, defs: dict[str, Any]) -> set[str]:
    """Every definition name ``node`` refers to, directly or through other definitions."""
    seen: set[str] = set()
    stack = list(_refs(node))
    while stack:
        name = stack.pop()
        if name not in seen and name in defs:
            seen.add(name)
            stack.extend(_refs(defs[name]))
    return seen


def _referenced(defs: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The definitions the parameter schemas still refer to, directly or through each other."""
    keep = _reachable(list(schemas.values()), defs)
    return {name: value for name, value in defs.items() if name in keep}


def _is_async(func: Callable[..., Any]) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(func):
        return True
    return not inspect.isroutine(func) and inspect.iscoroutinefunction(type(func).__call__)


def _is_tool_context(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return isinstance(annotation, type) and issubclass(annotation, ToolContext)


def _parameter(param: inspect.Parameter, annotation: Any, tool_param: ToolParam | None) -> ParameterSchema:
    field = _default_field(param, annotation)
    default = _plain_default(param, field)
    required = is_required(tool_param, annotation, default if field is None else field)
    keyword_only = param.kind is inspect.Parameter.KEYWORD_ONLY
    return ParameterSchema(param.name, required, param.default, keyword_only, annotation, field)


def _default_field(param: inspect.Parameter, annotation: Any) -> FieldInfo | None:
    """The ``Field(...)`` giving a parameter its default, as pydantic reads a signature; ``None`` when none does.

    ``x: T = Field(...)`` (pydantic takes the ``FieldInfo`` default as the field, not as a value), else the last
    ``Field(...)`` of ``Annotated[T, ...]`` with a ``default`` or ``default_factory``.
    """
    if isinstance(param.default, FieldInfo):
        return None if param.default.is_required() else param.default
    if get_origin(annotation) is not Annotated:
        return None
    fields = [m for m in get_args(annotation)[1:] if isinstance(m, FieldInfo) and not m.is_required()]
    return fields[-1] if fields else None


def _plain_default(param: inspect.Parameter, field: FieldInfo | None) -> Any:
    """A parameter's default value known without calling anything (``_MISSING``: none, or a factory's)."""
    if field is not None:
        return _MISSING if field.default_factory is not None else field.default
    return _MISSING if isinstance(param.default, FieldInfo) else param.default


def parameter_default(parameter: ParameterSchema, values: dict[str, Any]) -> Any:
    """The value of a parameter the model left out, as pydantic's ``Field`` semantics give it.

    Its ``Field``'s default, or its ``default_factory`` called once (with ``values``, the arguments bound so
    far, when the factory takes the validated data); else the Python default, deep-copied when it is not
    hashable (a ``list`` default is a fresh list per call, not shared between calls and threads: pydantic-core's
    ``with_default`` and ``validate_call`` do the same); else ``None`` (a parameter that admits ``None`` is
    optional, Spring's rule).
    """
    field = parameter.default_field
    if field is not None:
        return field.get_default(call_default_factory=True, validated_data=values)
    default = parameter.default
    if default is _MISSING:
        return None
    try:
        hash(default)
    except TypeError:
        return copy.deepcopy(default)
    return default


def _finish_parameter_schema(
    schema: dict[str, Any], default: Any, metadata: _Metadata, doc: str | None
) -> dict[str, Any]:
    """A parameter's generated schema as a property: no top-level ``format``, its description and default."""
    tool_param, field_description, _ = metadata
    schema.pop('format', None)
    schema.pop(REQUIRED_MARK, None)  # a parameter's own ToolParam.required is applied by is_required
    description = (tool_param.description if tool_param else None) or field_description or doc
    if description:
        schema['description'] = description
    if default is not _MISSING and default is not None:
        _set_default(schema, default)
    return schema


def _set_default(schema: dict[str, Any], default: Any) -> None:
    """``schema['default']``: ``default``'s JSON form, left out when it has none (orjson writes NaN/inf as ``null``; see :func:`_has_json_form`)."""
    try:
        value = orjson.dumps(default)
    except TypeError:
        return  # a default with no JSON form is simply not advertised
    if _has_json_form(default, int_max=_SENT_INT_MAX):
        schema['default'] = orjson.loads(value)


_JSON_INT_MIN = -(2**63)
_JSON_INT_MAX = 2**64 - 1
"""The integers a JSON Schema value may hold in the core (serde_json without arbitrary precision)."""
_SENT_INT_MAX = 2**63 - 1
"""The largest integer a tool accepts (the numbers rule: signed 64 bits): defaults, choices and bounds stop here."""


def _has_json_form(value: Any, *, int_max: int = _JSON_INT_MAX) -> bool:
    """Whether ``value`` (a default or a schema value: JSON-like data, enum members, dataclasses) has a JSON form.

    No NaN or infinite float or ``Decimal`` and no integer outside ``-2**63`` .. ``int_max`` anywhere in it
    (``_SENT_INT_MAX`` for what the model may send back: a default, an enum value, a bound); looks into
    dicts, lists, tuples, sets, enum members' values and dataclass fields, as orjson and pydantic
    serialize them; other objects count as having one.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float | decimal.Decimal):
            if not (math.isfinite(item) if isinstance(item, float) else item.is_finite()):
                return False
        elif isinstance(item, int) and not isinstance(item, bool):
            if not _JSON_INT_MIN <= item <= int_max:
                return False
        elif isinstance(item, enum.Enum):
            stack.append(item.value)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name, None) for f in dataclasses.fields(item))
    return True


_Metadata = tuple[ToolParam | None, str | None, bool]
"""A parameter's ``ToolParam``, its ``Field(description=)`` and whether only the TypedDict path can make its schema.

That is a ``Field(...)`` with a default of its own (the TypedDict field keeps it, the arguments
schema has the Python default), or with JSON Schema updates on a pydantic model or dataclass:
pydantic writes those into a recursive model's own core schema when it makes an arguments schema,
where every later schema of the model would show them (the TypedDict path keeps them on its field).
"""
_FIELD_JSON_ATTRIBUTES = ('title', 'description', 'examples', 'json_schema_extra', 'deprecated')
_NO_METADATA: _Metadata = (None, None, False)


def _annotated_metadata(annotation: Any) -> _Metadata:
    if get_origin(annotation) is not Annotated:
        return _NO_METADATA
    extras = get_args(annotation)[1:]
    tool_param = next((m for m in extras if isinstance(m, ToolParam)), None)
    fields = [m for m in extras if isinstance(m, FieldInfo)]
    description = next((f.description for f in fields if f.description), None)
    updates_model = hasattr(get_args(annotation)[0], '__pydantic_core_schema__') and any(
        getattr(f, name) is not None for f in fields for name in _FIELD_JSON_ATTRIBUTES
    )
    return tool_param, description, updates_model or any(not f.is_required() for f in fields)


def is_required(tool_param: ToolParam | None, annotation: Any, default: Any) -> bool:
    """Spring's required rule, first that applies: ``ToolParam(required=)``, admits ``None``, has a default, required.

    Args:
        tool_param: The ``ToolParam`` of the parameter or field, if any.
        annotation: Its type.
        default: Its default, ``inspect.Parameter.empty`` when it has none.
    """
    if tool_param is not None and tool_param.required is not None:
        return tool_param.required
    if _admits_none(annotation):
        return False
    return default is _MISSING


def _admits_none(annotation: Any) -> bool:
    if annotation is None or annotation is type(None):
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_admits_none(arg) for arg in get_args(annotation))
    return False
