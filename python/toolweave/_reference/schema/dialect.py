"""Twin of ``rust/schema/dialect/``: provider dialects (see ``rust/schema/dialect/mod.rs`` or the README for the table).

One file here for the Rust directory (``mod.rs`` with the shared helpers, ``openai.rs``, ``gemini.rs``): the
sections below follow it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from toolweave._reference.schema.value import MAX_DEPTH, _json_value
from toolweave._reference.schema.walks import _too_deep

__all__ = ['DIALECTS', 'MAX_NODES', 'to_dialect']

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
