"""Twin of the tree walks in ``rust/schema/mod.rs``: ``$defs`` hoisting, ``additionalProperties: false``, upper-case types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolweave._reference.schema.value import MAX_DEPTH, _json_value, _object

__all__ = ['LITERAL_KEYWORDS', 'forbid_additional_properties', 'hoist_defs_to_root', 'upper_case_type_values']

LITERAL_KEYWORDS = frozenset({'enum', 'const', 'default', 'examples'})


def _too_deep() -> ValueError:
    return ValueError(f'schema nested deeper than {MAX_DEPTH} levels')


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
