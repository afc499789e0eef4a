"""Pure-Python twins of the Rust schema functions (``rust/schema/``): same results, same errors.

See ``rust/schema/dialect.rs`` (or the README) for the table of what each dialect changes. The
``SchemaValidator`` twin uses the ``jsonschema`` package (a test dependency); its messages differ
from the Rust crate's, its pointers and keywords do not.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from typing import Any

from toolweave._reference.json import parse_arguments
from toolweave.exceptions import SchemaValidationError

__all__ = [
    'SchemaValidator',
    'forbid_additional_properties',
    'hoist_defs_to_root',
    'to_dialect',
    'upper_case_type_values',
]

MAX_DEPTH = 256
LITERAL_KEYWORDS = frozenset({'enum', 'const', 'default', 'examples'})
DIALECTS = ('openai-strict', 'gemini', 'anthropic')
MAX_NODES = 100_000
OPENAI_KEPT = frozenset(
    [
        'type',
        'properties',
        'required',
        'additionalProperties',
        'items',
        'anyOf',
        'enum',
        'const',
        '$ref',
        '$defs',
        'description',
        'title',
        'pattern',
        'format',
        'minimum',
        'maximum',
        'exclusiveMinimum',
        'exclusiveMaximum',
        'multipleOf',
        'minItems',
        'maxItems',
    ]
)
GEMINI_KEPT = frozenset(
    [
        'type',
        'format',
        'description',
        'nullable',
        'enum',
        'properties',
        'required',
        'items',
        'minItems',
        'maxItems',
        'minimum',
        'maximum',
        'anyOf',
        'title',
        'minLength',
        'maxLength',
        'pattern',
        'minProperties',
        'maxProperties',
        'default',
        'propertyOrdering',
        'example',
    ]
)
GEMINI_FORMATS = frozenset({'date-time', 'enum', 'int32', 'int64', 'float', 'double'})


def _too_deep() -> ValueError:
    return ValueError(f'schema nested deeper than {MAX_DEPTH} levels')


def _json_value(value: Any, depth: int = 0) -> Any:
    """A plain-JSON deep copy (dicts, lists), checked as the Rust conversion checks it."""
    if depth > MAX_DEPTH:
        raise ValueError(f'JSON value nested deeper than {MAX_DEPTH} levels')
    if value is None or isinstance(value, (str, bool)):
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
        return [_json_value(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f'JSON object keys must be str, not {type(k).__name__}')
            out[k] = _json_value(v, depth + 1)
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
    out = _json_value(value)
    if not isinstance(out, dict):
        raise TypeError(f'{what} must be a mapping, not {type(value).__name__}')
    return out


def hoist_defs_to_root(schema: Mapping[str, Any], root_defs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Move ``schema['$defs']`` into ``root_defs``; returns ``(schema_without_defs, new_root_defs)``.

    A definition renamed on a clash (``Name_2``, ...) has its references rewritten in the moved schema and
    the moved definitions, path tails kept (``#/$defs/A/properties/y`` -> ``#/$defs/A_2/properties/y``).
    """
    node = _json_value(schema)
    defs = _object(root_defs, 'root_defs')
    if not isinstance(node, dict) or '$defs' not in node or not isinstance(node['$defs'], dict):
        return node, defs
    local = node.pop('$defs')
    renames: dict[str, str] = {}
    for name, definition in local.items():
        if name in defs and defs[name] != definition:
            suffix = 2
            while (cand := f'{name}_{suffix}') in defs or cand in local or cand in renames.values():
                suffix += 1
            renames[name] = cand
    if renames:
        _rewrite_refs(node, renames, 0)
    for name, definition in local.items():
        if renames:
            _rewrite_refs(definition, renames, 0)
        defs.setdefault(renames.get(name, name), definition)
    return node, defs


def _rewrite_refs(node: Any, renames: Mapping[str, str], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _too_deep()
    if isinstance(node, dict):
        ref = node.get('$ref')
        if isinstance(ref, str) and ref.startswith('#/$defs/'):
            name, slash, tail = ref[8:].partition('/')  # '#/$defs/A/properties/y' points inside A
            if name in renames:
                node['$ref'] = f'#/$defs/{renames[name]}{slash}{tail}'
        for value in node.values():
            _rewrite_refs(value, renames, depth + 1)
    elif isinstance(node, list):
        for item in node:
            _rewrite_refs(item, renames, depth + 1)


def forbid_additional_properties(schema: Any) -> Any:
    """A copy with ``additionalProperties: false`` on every object node with ``properties`` and none of its own."""
    node = _json_value(schema)
    _forbid(node, 0)
    return node


def _forbid(node: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _too_deep()
    if isinstance(node, dict):
        if 'properties' in node and 'additionalProperties' not in node:
            node['additionalProperties'] = False
        for key, value in node.items():
            if key not in LITERAL_KEYWORDS:
                _forbid(value, depth + 1)
    elif isinstance(node, list):
        for item in node:
            _forbid(item, depth + 1)


def upper_case_type_values(schema: Any) -> Any:
    """A copy with every string value of a ``type`` keyword upper-cased."""
    node = _json_value(schema)
    _upper(node, 0)
    return node


def _upper(node: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _too_deep()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == 'type' and isinstance(value, str):
                node[key] = value.upper()
            elif key == 'type' and isinstance(value, list):
                node[key] = [v.upper() if isinstance(v, str) else v for v in value]
            elif key == 'type' or key not in LITERAL_KEYWORDS:
                _upper(value, depth + 1)
    elif isinstance(node, list):
        for item in node:
            _upper(item, depth + 1)


def to_dialect(schema: Mapping[str, Any], dialect: str) -> Any:
    """``schema`` rewritten for ``'openai-strict'``, ``'gemini'`` or ``'anthropic'``.

    ``'gemini'`` gives None for a schema without parameters (see :func:`_without_parameters`).

    Raises:
        TypeError: ``dialect`` is not a str.
        ValueError: unknown dialect, nesting deeper than 256, or (Gemini) inlining past 100,000 nodes.
    """
    if not isinstance(dialect, str):
        raise TypeError(f'dialect must be a str, not {type(dialect).__name__}')
    if dialect not in DIALECTS:
        raise ValueError(f'unknown schema dialect {json.dumps(dialect)}; supported: {", ".join(DIALECTS)}')
    node = _json_value(schema)
    if dialect == 'anthropic':
        return node
    if dialect == 'openai-strict':
        _strict(node, 0)
        return node
    defs = node.get('$defs') if isinstance(node, dict) else None
    out = _Gemini(defs if isinstance(defs, dict) else {}).node(node, 0)
    return None if _without_parameters(out) else out


def _without_parameters(schema: Any) -> bool:
    """A Gemini parameters schema that declares no parameter (sent as no ``parameters`` at all).

    An object (or untyped) node with no or empty ``properties`` and no ``anyOf``: Gemini rejects an
    ``OBJECT`` with empty ``properties`` and documents ``parameters`` as optional ("for function with no
    parameters, this can be left unset").
    """
    if not isinstance(schema, dict):
        return False
    return (
        schema.get('type', 'object') == 'object'
        and ('properties' not in schema or schema['properties'] == {})
        and 'anyOf' not in schema
    )


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False)


def _add_notes(node: dict[str, Any], notes: list[tuple[str, Any]]) -> None:
    if not notes:
        return
    text = '; '.join(f'{k}: {_compact(v)}' for k, v in notes)
    description = node.get('description')
    node['description'] = f'{description} ({text})' if isinstance(description, str) and description else text


def _normalise(node: dict[str, Any]) -> None:
    if 'anyOf' not in node and 'oneOf' in node:
        node['anyOf'] = node.pop('oneOf')
    all_of = node.get('allOf')
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        inner = node.pop('allOf')[0]
        for k, v in inner.items():
            node.setdefault(k, v)


def _is_null_schema(value: Any) -> bool:
    return isinstance(value, dict) and value.get('type') == 'null'


def _strict(node: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _too_deep()
    if not isinstance(node, dict):
        return
    _normalise(node)
    node.pop('$schema', None)
    if 'default' in node and node['default'] is None:
        del node['default']
    notes = [(k, node.pop(k)) for k in [k for k in node if k not in OPENAI_KEPT]]
    _add_notes(node, notes)
    _strict_children(node, depth)
    kind = node.get('type')
    is_object = 'properties' in node or kind == 'object' or (isinstance(kind, list) and 'object' in kind)
    if not is_object:
        return
    if not isinstance(node.get('additionalProperties'), dict):
        node['additionalProperties'] = False
    props = node.get('properties')
    if isinstance(props, dict):
        required = node.get('required')
        old: list[Any] = required if isinstance(required, list) else []
        for name, prop in props.items():
            if name not in old:
                _make_nullable(prop)
        node['required'] = list(props)


def _strict_children(node: dict[str, Any], depth: int) -> None:
    for key in ('items', 'additionalProperties'):
        if key in node:
            _strict(node[key], depth + 1)
    for key in ('properties', '$defs'):
        if isinstance(node.get(key), dict):
            for child in node[key].values():
                _strict(child, depth + 1)
    if isinstance(node.get('anyOf'), list):
        for child in node['anyOf']:
            _strict(child, depth + 1)


def _make_nullable(node: Any) -> None:
    if not isinstance(node, dict):
        return
    if isinstance(node.get('anyOf'), list):
        branches = node['anyOf']
        if not any(
            _is_null_schema(b) or (isinstance(b, dict) and isinstance(b.get('type'), list) and 'null' in b['type'])
            for b in branches
        ):
            branches.append({'type': 'null'})
        return
    if '$ref' in node or ('const' in node and 'type' not in node):
        description = node.pop('description', None)
        inner = dict(node)
        node.clear()
        node['anyOf'] = [inner, {'type': 'null'}]
        if description is not None:
            node['description'] = description
        return
    kind = node.get('type')
    if isinstance(kind, str) and kind != 'null':
        node['type'] = [kind, 'null']
    elif isinstance(kind, list) and 'null' not in kind:
        kind.append('null')
    if isinstance(node.get('enum'), list) and None not in node['enum']:
        node['enum'].append(None)


class _Gemini:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.stack: list[str] = []
        self.nodes = 0

    def node(self, value: Any, depth: int) -> Any:  # noqa: C901 - one pass per keyword, as the Rust twin
        if depth > MAX_DEPTH:
            raise _too_deep()
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ValueError(f'gemini dialect: inlining $defs would produce more than {MAX_NODES} schema nodes')
        if not isinstance(value, dict):
            return copy.deepcopy(value)
        node = dict(value)
        node.pop('$schema', None)
        node.pop('$defs', None)
        if isinstance(node.get('$ref'), str):
            return self.inline(node.pop('$ref'), node, depth)
        _normalise(node)
        notes: list[tuple[str, Any]] = []
        nullable = node.pop('nullable', None) is True
        if isinstance(node.get('anyOf'), list):
            branches = node.pop('anyOf')
            rest = [b for b in branches if not _is_null_schema(b)]
            nullable |= len(rest) < len(branches)
            if len(rest) == 1:
                merged = self.node(rest[0], depth + 1)
                if isinstance(merged, dict):
                    for k, v in merged.items():
                        if k == 'nullable':
                            nullable |= v is True
                        else:
                            node.setdefault(k, v)
            elif rest:
                node['anyOf'] = [self.node(b, depth + 1) for b in rest]
        kind = node.get('type')
        if kind == 'null':
            del node['type']
            nullable = True
        elif isinstance(kind, list):
            kept = [t for t in kind if t != 'null']
            nullable |= len(kept) < len(kind)
            if len(kept) == 1:
                node['type'] = kept[0]
            else:
                del node['type']
                if kept:
                    node['anyOf'] = [{'type': t} for t in kept]
        if 'const' in node:
            const = node.pop('const')
            if isinstance(const, str):
                node['enum'] = [const]
                node.setdefault('type', 'string')
            else:
                notes.append(('const', const))
        if isinstance(node.get('enum'), list):
            values = node['enum']
            non_null = [v for v in values if v is not None]
            nullable |= len(non_null) < len(values)
            if non_null and all(isinstance(v, str) for v in non_null):
                node['enum'] = non_null
                node.setdefault('type', 'string')
            else:
                notes.append(('enum', node.pop('enum')))
        if 'default' in node and node['default'] is None:
            del node['default']
        if isinstance(node.get('additionalProperties'), bool):
            del node['additionalProperties']
        if isinstance(node.get('format'), str) and node['format'] not in GEMINI_FORMATS:
            notes.append(('format', node.pop('format')))
        if 'items' in node and not isinstance(node['items'], dict):
            notes.append(('items', node.pop('items')))
        # Schema-valued keywords that move into the description get their `$ref`s inlined first.
        if 'additionalProperties' in node:
            node['additionalProperties'] = self.node(node['additionalProperties'], depth + 1)
        if isinstance(node.get('prefixItems'), list):
            node['prefixItems'] = [self.node(b, depth + 1) for b in node['prefixItems']]
        notes.extend((k, node.pop(k)) for k in [k for k in node if k not in GEMINI_KEPT])
        if 'items' in node:
            node['items'] = self.node(node['items'], depth + 1)
        if isinstance(node.get('properties'), dict):
            node['properties'] = {k: self.node(v, depth + 1) for k, v in node['properties'].items()}
        _add_notes(node, notes)
        if nullable:
            node['nullable'] = True
        return node

    def inline(self, reference: str, siblings: dict[str, Any], depth: int) -> Any:
        name = reference[8:] if reference.startswith('#/$defs/') else ''
        target = self.defs.get(name)
        if not isinstance(target, dict):
            _add_notes(siblings, [('$ref', reference)])
            return self.node(siblings, depth + 1)
        if name in self.stack:
            out: dict[str, Any] = {'type': 'object'}
            if 'description' in siblings:
                out['description'] = siblings['description']
            _add_notes(out, [('recursive', name)])
            return out
        merged = {**target, **siblings}
        self.stack.append(name)
        try:
            return self.node(merged, depth + 1)
        finally:
            self.stack.pop()


class SchemaValidator:
    """Twin of ``toolweave._core.SchemaValidator`` over the ``jsonschema`` package."""

    def __init__(self, schema: Mapping[str, Any] | bool) -> None:
        import jsonschema  # type: ignore[import-untyped]  # test dependency, only for the pure-Python twin
        import jsonschema.validators  # type: ignore[import-untyped]

        value = _json_value(schema)
        if not isinstance(value, (dict, bool)):
            raise TypeError(f'schema must be a mapping or a bool, not {type(schema).__name__}')
        cls = jsonschema.validators.validator_for(value, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(value)
        except jsonschema.SchemaError as exc:
            raise ValueError(f'invalid JSON Schema: {exc.message}') from None
        self._schema = value
        self._validator = cls(value)

    @property
    def schema(self) -> Any:
        """A copy of the schema."""
        return copy.deepcopy(self._schema)

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` is valid."""
        return bool(self._validator.is_valid(_json_value(instance)))

    def errors(self, instance: Any) -> list[dict[str, str]]:
        """Every failure as ``{'pointer', 'keyword', 'message'}``."""
        out = []
        for error in self._validator.iter_errors(_json_value(instance)):
            pointer = ''.join('/' + str(p).replace('~', '~0').replace('/', '~1') for p in error.absolute_path)
            out.append({'pointer': pointer, 'keyword': str(error.validator), 'message': error.message})
        return out

    def validate(self, instance: Any) -> None:
        """Raise ``SchemaValidationError`` listing every failure."""
        self._raise(_json_value(instance))

    def validate_json(self, data: str | bytes, *, int64: bool = False) -> Any:
        """Parse (as ``parse_arguments``: a JSON object, blank = ``{}``) and validate; returns the value.

        With ``int64``, an integer above ``2**63 - 1`` raises ``ValueError`` before validation.
        """
        if not isinstance(data, (str, bytes)):
            raise TypeError(f'validate_json() expects str or bytes, got {type(data).__name__}')
        value = parse_arguments(data)
        checked = _json_value(value)  # checked as the Rust conversion checks it (64-bit ints)
        if int64 and _beyond_int64(checked):
            raise ValueError(BEYOND_INT64)
        self._raise(checked)
        return value

    def _raise(self, value: Any) -> None:
        if self._validator.is_valid(value):
            return
        errors = self.errors(value)
        message = '; '.join(f'{e["pointer"] or "/"}: {e["message"]}' for e in errors)
        raise SchemaValidationError(message, errors)

    def __repr__(self) -> str:
        text = json.dumps(self._schema, separators=(',', ':'), ensure_ascii=False)
        return f'SchemaValidator({text[:60]}...)' if len(text) > 60 else f'SchemaValidator({text})'
