r"""Error messages worded as the Rust ``jsonschema`` crate 0.61 words them (``Display for ValidationError``, ``error.rs``).

Values are shown as ``serde_json`` displays them: compact JSON, keys in their order, non-ASCII kept, control
characters escaped (``\u0001``, ``\n``), floats in ``zmij``'s shortest form (``1.0``, ``0.00001``, ``1e-6``,
``1e+16``). Nothing is truncated. ``multipleOf`` shows its value as a Rust ``f64`` (``2``, ``0.0000001``).

:func:`message` words an error of the ``jsonschema`` package from its keyword, the keyword's value, the schema
and the instance; the keywords of :mod:`.keywords` that build their own errors word them with the functions here
and mark them (:func:`crate_error`), so :func:`message` keeps their text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

__all__ = [
    'additional_properties',
    'contains',
    'crate_error',
    'false_schema',
    'json_text',
    'message',
    'multiple_of',
    'pattern',
    'required',
    'unevaluated',
]

# The crate's JsonType order (jsonschema-value's types.rs): a multi-type message lists them so, not as written.
_TYPE_ORDER = ('null', 'boolean', 'integer', 'number', 'string', 'array', 'object')
_MAX_ENUM_SHOWN = 3  # MAX_DISPLAYED_ENUM_VARIANTS
_CRATE_TEXT = 'toolweave_crate_text'  # the attribute marking an error already worded as the crate


def json_text(value: Any) -> str:
    """``value`` (a checked JSON value: dict, list, str, int, float, bool, None) as ``serde_json`` displays it."""
    if value is None:
        return 'null'
    if value is True:
        return 'true'
    if value is False:
        return 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return '[' + ','.join(json_text(v) for v in value) + ']'
    if isinstance(value, Mapping):
        return '{' + ','.join(f'{json.dumps(k, ensure_ascii=False)}:{json_text(v)}' for k, v in value.items()) + '}'
    raise TypeError(f'{type(value).__name__} is not a JSON value')


def _float_text(value: float) -> str:
    """A finite float as ``zmij`` writes it: Python's shortest digits, fixed from 1e-5 up to 1e16, else ``1.5e-7``.

    (Python writes ``1e-05`` and ``1e-07``: scientific from 1e-5 down, a two-digit exponent.)
    """
    text = repr(value)
    mantissa, e, exponent = text.partition('e')
    if not e:
        return text
    power = int(exponent)
    if power == -5:
        sign = '-' if mantissa.startswith('-') else ''
        return f'{sign}0.0000{mantissa.lstrip("-").replace(".", "")}'
    return f'{mantissa}e{"+" if power > 0 else "-"}{abs(power)}'


def _rust_f64(value: float) -> str:
    """``value`` as Rust's ``Display for f64``: shortest digits, never scientific, no ``.0`` (``2``, ``0.0000001``)."""
    text = format(Decimal(repr(float(value))), 'f')
    if '.' in text:
        text = text.rstrip('0').rstrip('.')
    return text


def _plural(count: int, one: str, many: str) -> str:
    return f'{count} {one if count == 1 else many}'


def crate_error(error: Any, text: str) -> Any:
    """Mark ``error`` (a package ``ValidationError``) as worded as the crate: :func:`message` returns ``text``."""
    setattr(error, _CRATE_TEXT, text)
    return error


def false_schema(instance: Any) -> str:
    return f'False schema does not allow {json_text(instance)}'


def required(name: Any) -> str:
    return f'{json_text(name)} is a required property'


def _quoted_list(items: Iterable[str]) -> str:
    """The crate's ``write_quoted_list``: each item in single quotes, raw (no escaping), joined by ``, ``."""
    return ', '.join(f"'{item}'" for item in items)


def _unexpected(count: int) -> str:
    return ' was unexpected)' if count == 1 else ' were unexpected)'


def additional_properties(names: list[str]) -> str:
    return f'Additional properties are not allowed ({_quoted_list(names)}{_unexpected(len(names))}'


def unevaluated(what: str, unexpected: list[str]) -> str:
    """``what`` is ``properties`` (``unexpected``: names) or ``items`` (``unexpected``: items as JSON text)."""
    return f'Unevaluated {what} are not allowed ({_quoted_list(unexpected)}{_unexpected(len(unexpected))}'


def contains(instance: Any) -> str:
    return f'None of {json_text(instance)} are valid under the given schema'


def pattern(instance: Any, regex: str) -> str:
    return f'{json_text(instance)} does not match "{regex}"'


def multiple_of(instance: Any, multiple: float) -> str:
    return f'{json_text(instance)} is not a multiple of {_rust_f64(multiple)}'


def _type(instance: Any, types: Any) -> str:
    if isinstance(types, str):
        return f'{json_text(instance)} is not of type "{types}"'
    listed = [t for t in _TYPE_ORDER if t in types]
    if len(listed) == 1:
        return f'{json_text(instance)} is not of type "{listed[0]}"'
    return f'{json_text(instance)} is not of types ' + ', '.join(f'"{t}"' for t in listed)


def _enum(instance: Any, options: list[Any]) -> str:
    shown = [json_text(o) for o in options]
    if len(shown) <= _MAX_ENUM_SHOWN:
        head, last = shown[:-1], shown[-1:]
        listed = ' or '.join([', '.join(head), *last]) if head else ''.join(last)
    else:
        listed = f'{", ".join(shown[: _MAX_ENUM_SHOWN - 1])} or {len(shown) - _MAX_ENUM_SHOWN + 1} other candidates'
    return f'{json_text(instance)} is not one of {listed}'


def _additional_items(instance: list[Any], schema: Mapping[str, Any]) -> str:
    extra = instance[len(schema.get('items', ())) :]
    return f'Additional items are not allowed ({", ".join(json_text(i) for i in extra)}{_unexpected(len(extra))}'


def _bound(keyword: str, instance: Any, limit: Any, schema: Mapping[str, Any]) -> str:
    """``minimum``/``maximum`` and their exclusive forms (draft 4's ``exclusiveMaximum: true`` included)."""
    if keyword in ('minimum', 'maximum') and schema.get(f'exclusive{keyword.capitalize()}') is True:
        keyword = f'exclusive{keyword.capitalize()}'
    text = {
        'minimum': 'is less than the minimum of',
        'maximum': 'is greater than the maximum of',
        'exclusiveMinimum': 'is less than or equal to the minimum of',
        'exclusiveMaximum': 'is greater than or equal to the maximum of',
    }[keyword]
    return f'{json_text(instance)} {text} {json_text(limit)}'


def _count(keyword: str, instance: Any, limit: Any) -> str:
    """The length and size limits (a limit written ``2.0`` is the crate's ``u64`` 2)."""
    n = int(limit)
    return {
        'minLength': f'{json_text(instance)} is shorter than {_plural(n, "character", "characters")}',
        'maxLength': f'{json_text(instance)} is longer than {_plural(n, "character", "characters")}',
        'minItems': f'{json_text(instance)} has less than {_plural(n, "item", "items")}',
        'maxItems': f'{json_text(instance)} has more than {_plural(n, "item", "items")}',
        'minProperties': f'{json_text(instance)} has less than {_plural(n, "property", "properties")}',
        'maxProperties': f'{json_text(instance)} has more than {_plural(n, "property", "properties")}',
    }[keyword]


_COUNTS = frozenset(['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'])
_BOUNDS = frozenset(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])


def message(error: Any) -> str:
    """The crate's text for ``error`` (a ``jsonschema`` package ``ValidationError``).

    An error this module cannot word (a keyword the crate words otherwise, or reports differently) keeps the
    package's text; see "Known remaining differences" in :mod:`.validate`.
    """
    marked = getattr(error, _CRATE_TEXT, None)
    if marked is not None:
        return str(marked)
    keyword, value, instance = error.validator, error.validator_value, error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if keyword is None:
        return false_schema(instance)
    if keyword == 'type':
        return _type(instance, value)
    if keyword == 'enum':
        return _enum(instance, value)
    if keyword == 'const':
        return f'{json_text(value)} was expected'
    if keyword in _BOUNDS:
        return _bound(keyword, instance, value, schema)
    if keyword in _COUNTS:
        return _count(keyword, instance, value)
    if keyword == 'uniqueItems':
        return f'{json_text(instance)} has non-unique elements'
    if keyword == 'not':
        return f'{json_text(value)} is not allowed for {json_text(instance)}'
    if keyword == 'anyOf':
        return f"{json_text(instance)} is not valid under any of the schemas listed in the 'anyOf' keyword"
    if keyword == 'oneOf':
        # the package's "none valid" error carries the subschemas' errors, its "several valid" error none
        verdict = 'is not valid under any' if error.context else 'is valid under more than one'
        return f"{json_text(instance)} {verdict} of the schemas listed in the 'oneOf' keyword"
    if keyword == 'format':
        return f'{json_text(instance)} is not a "{value}"'
    if keyword == 'additionalItems' and isinstance(instance, list):
        return _additional_items(instance, schema)
    return str(error.message)
