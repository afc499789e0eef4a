"""Input JSON Schema of a Python function (Spring AI ``JsonSchemaGenerator.generateForMethodInput``).

Each parameter's type goes through pydantic's JSON Schema generator; the parameter schemas are
then assembled into one object schema by Spring's rules:

* ``{"$schema": 2020-12, "type": "object", "$defs"?, "properties", "required", "additionalProperties": false}``,
  properties in declaration order, ``required`` always present, empty ``$defs`` dropped;
* required, first rule that applies: ``ToolParam(required=...)``; the type admits ``None`` -> not
  required; a default -> not required; else required (``PROPERTY_REQUIRED_BY_DEFAULT``);
* each parameter's ``$defs`` hoisted to the root (identical -> reused, different -> ``Name_2`` ...);
* the top-level ``format`` of each parameter removed, ``additionalProperties: false`` on objects.

A ``ToolContext`` parameter, ``self``/``cls`` and ``*args`` are skipped; ``**kwargs`` is rejected.
Results are cached per function, so a second call is a dictionary lookup.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

import docstring_parser
import orjson
import pydantic
from pydantic.fields import FieldInfo

from toolweave.tools.context import ToolContext
from toolweave.tools.param import ToolParam

__all__ = ['FunctionSchema', 'ParameterSchema', 'function_schema', 'name_to_description']

SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'
_MISSING: Any = inspect.Parameter.empty


@dataclass(frozen=True)
class ParameterSchema:
    """One model-visible parameter.

    Attributes:
        name: Parameter name (the JSON property name).
        adapter: pydantic ``TypeAdapter`` that validates and coerces the argument value.
        required: Whether the schema lists it as required.
        default: The Python default, or ``inspect.Parameter.empty``.
        keyword_only: Passed by keyword (after ``*``) rather than position.
    """

    name: str
    adapter: pydantic.TypeAdapter[Any]
    required: bool
    default: Any
    keyword_only: bool


@dataclass(frozen=True)
class FunctionSchema:
    """The schema side of a function: what the model sees and how to bind its arguments.

    Attributes:
        input_schema: The JSON Schema of the argument object.
        parameters: Model-visible parameters in declaration order.
        context_parameter: Name of the ``ToolContext`` parameter, if any.
        summary: Docstring summary plus body (``''`` when there is no docstring).
        is_async: Whether the function is a coroutine function.
    """

    input_schema: dict[str, Any]
    parameters: tuple[ParameterSchema, ...]
    context_parameter: str | None
    summary: str
    is_async: bool


def name_to_description(name: str) -> str:
    """``get_weather`` / ``getWeather`` -> ``'get weather'`` (Spring splits camelCase the same way)."""
    spaced = re.sub(r'(?<=[a-z0-9])(?=[A-Z])', ' ', name).replace('_', ' ').replace('-', ' ')
    return ' '.join(spaced.lower().split())


def function_schema(func: Callable[..., Any]) -> FunctionSchema:
    """The :class:`FunctionSchema` of ``func``, built once per underlying function.

    Bound methods share the cache entry of their function (``self`` is skipped), so the cache
    never keeps instances alive.

    Raises:
        TypeError: ``func`` takes ``**kwargs``, or a parameter's type has no JSON Schema
            (the message names the parameter and the type).
    """
    return _function_schema(getattr(func, '__func__', func))


@functools.lru_cache(maxsize=4096)
def _function_schema(func: Callable[..., Any]) -> FunctionSchema:
    docstring = docstring_parser.parse(inspect.getdoc(func) or '')
    doc_params = {p.arg_name: p.description or '' for p in docstring.params}
    hints = typing.get_type_hints(func, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    parameters: list[ParameterSchema] = []
    context_parameter = None
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, Any)
        if _is_tool_context(annotation):
            context_parameter = param.name
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f'tool {func.__qualname__!r}: **{param.name} is not supported; declare each parameter')
        if param.kind is inspect.Parameter.VAR_POSITIONAL or param.name in ('self', 'cls'):
            continue
        parameter, schema = _parameter(func, param, annotation, doc_params.get(param.name))
        properties[param.name] = _hoist_defs(schema, defs)
        parameters.append(parameter)
        if parameter.required:
            required.append(param.name)
    input_schema: dict[str, Any] = {'$schema': SCHEMA_DIALECT, 'type': 'object'}
    if defs:
        input_schema['$defs'] = defs
    input_schema.update(properties=properties, required=required, additionalProperties=False)
    forbid_additional_properties(input_schema)
    summary = '\n\n'.join(p for p in (docstring.short_description, docstring.long_description) if p)
    return FunctionSchema(input_schema, tuple(parameters), context_parameter, summary, _is_async(func))


def _is_async(func: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)


def _is_tool_context(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return isinstance(annotation, type) and issubclass(annotation, ToolContext)


def _parameter(
    func: Callable[..., Any], param: inspect.Parameter, annotation: Any, doc: str | None
) -> tuple[ParameterSchema, dict[str, Any]]:
    tool_param, field_description = _annotated_metadata(annotation)
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(annotation)
        schema = adapter.json_schema(ref_template='#/$defs/{model}')
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as exc:
        raise TypeError(
            f'tool {func.__qualname__!r}: parameter {param.name!r} has type {annotation!r} with no JSON Schema: {exc}'
        ) from exc
    schema.pop('format', None)
    schema.pop('title', None)
    description = (tool_param.description if tool_param else None) or field_description or doc
    if description:
        schema['description'] = description
    if param.default is not _MISSING and param.default is not None:
        _set_default(schema, param.default)
    required = _is_required(tool_param, annotation, param.default)
    keyword_only = param.kind is inspect.Parameter.KEYWORD_ONLY
    return ParameterSchema(param.name, adapter, required, param.default, keyword_only), schema


def _set_default(schema: dict[str, Any], default: Any) -> None:
    try:
        schema['default'] = orjson.loads(orjson.dumps(default))
    except TypeError:
        pass  # a default with no JSON form is simply not advertised


def _annotated_metadata(annotation: Any) -> tuple[ToolParam | None, str | None]:
    if get_origin(annotation) is not Annotated:
        return None, None
    extras = get_args(annotation)[1:]
    tool_param = next((m for m in extras if isinstance(m, ToolParam)), None)
    field = next((m for m in extras if isinstance(m, FieldInfo) and m.description), None)
    return tool_param, field.description if field else None


def _is_required(tool_param: ToolParam | None, annotation: Any, default: Any) -> bool:
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


def _hoist_defs(schema: dict[str, Any], root_defs: dict[str, Any]) -> dict[str, Any]:
    """Move ``schema['$defs']`` into ``root_defs``: identical -> reuse, different -> ``Name_2``, ``Name_3`` ..."""
    local = schema.pop('$defs', None)
    if not local:
        return schema
    renames: dict[str, str] = {}
    for name, definition in local.items():
        if root_defs.get(name, definition) == definition:
            continue
        suffix = 2
        while f'{name}_{suffix}' in root_defs or f'{name}_{suffix}' in local or f'{name}_{suffix}' in renames.values():
            suffix += 1
        renames[name] = f'{name}_{suffix}'
    moved = _rewrite_refs({'schema': schema, 'defs': local}, renames) if renames else {'schema': schema, 'defs': local}
    for name, definition in moved['defs'].items():
        root_defs.setdefault(renames.get(name, name), definition)
    result: dict[str, Any] = moved['schema']
    return result


def _rewrite_refs(node: Any, renames: Mapping[str, str]) -> Any:
    if isinstance(node, dict):
        out = {key: _rewrite_refs(value, renames) for key, value in node.items()}
        ref = out.get('$ref')
        if isinstance(ref, str) and ref.startswith('#/$defs/') and ref[8:] in renames:
            out['$ref'] = '#/$defs/' + renames[ref[8:]]
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item, renames) for item in node]
    return node


def forbid_additional_properties(node: Any) -> None:
    """Add ``additionalProperties: false`` to every object node with ``properties`` and none of its own."""
    if isinstance(node, dict):
        if 'properties' in node and 'additionalProperties' not in node:
            node['additionalProperties'] = False
        for value in node.values():
            forbid_additional_properties(value)
    elif isinstance(node, list):
        for item in node:
            forbid_additional_properties(item)
