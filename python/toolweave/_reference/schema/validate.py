"""Twin of ``rust/schema/validate.rs``: ``SchemaValidator`` over the ``jsonschema`` package (a test dependency).

Its keywords are made to answer as the Rust crate's (:mod:`.keywords`): same accept/reject, pointers, keywords
and order of errors, and its messages are worded as the crate's (:mod:`.messages`: ``/n: "seven" is not of type
"integer"``, values as compact JSON), so the ``SchemaValidationError`` text a model reads is the same.

Known remaining differences:

- a ``$ref`` cycle that also carries constraints reports them once where the crate repeats them while unrolling
  the cycle (same accept/reject);
- a ``pattern`` the crate's regex engine gives up on (backtrack limit, engine failure) has the crate's engine
  error as its message; the twin's engine has no such failure, so it has no such message;
- under drafts 4 to 7 the crate asserts ``format`` (``"b" is not a "email"``), and under drafts 6 and 7
  ``contentEncoding``/``contentMediaType``, where the twin does not: those errors are missing (an
  accept/reject difference, not a wording one); draft 4's ``exclusiveMaximum: true`` is worded as the crate's
  but named ``maximum`` (the crate: ``exclusiveMaximum``), likewise ``minimum``;
- an error of a keyword :mod:`.messages` does not know keeps the package's wording (none the crate reports
  under draft 2020-12 is left so).
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
from collections.abc import Mapping
from typing import Any

from toolweave._reference.json import parse_arguments
from toolweave._reference.schema.keywords import ACTIVE_REFS, RefState, check_refs, validator_class
from toolweave._reference.schema.messages import false_schema, message
from toolweave._reference.schema.value import BEYOND_INT64, _beyond_int64, _json_value
from toolweave.exceptions import SchemaValidationError

__all__ = ['SchemaValidator']

# The package's validators take about 7 Python frames per nesting level of the instance; values nest at most
# 256 deep (the core's limit), so a 256-deep valid instance needs ~2,000 frames where CPython allows 1,000.
# Raised once, at import (not mid-call, where test runners watching the limit would object), never lowered.
_RECURSION_FLOOR = 10_000
if sys.getrecursionlimit() < _RECURSION_FLOOR:
    sys.setrecursionlimit(_RECURSION_FLOOR)


def _extra_items(pointer: str, items: list[Any], allowed: int) -> list[dict[str, str]]:
    """``"items": false`` past ``prefixItems`` as the crate reports it: each extra item fails the ``false`` schema.

    (The ``jsonschema`` package reports one ``items`` error at the array.)
    """
    return [
        {
            'pointer': f'{pointer}/{i}',
            'keyword': 'falseSchema',
            'message': false_schema(item),
        }
        for i, item in enumerate(items)
        if i >= allowed
    ]


class SchemaValidator:
    """Twin of ``toolweave._core.SchemaValidator`` over the ``jsonschema`` package."""

    def __init__(self, schema: Mapping[str, Any] | bool) -> None:
        import jsonschema  # type: ignore[import-untyped]  # test dependency, only for the pure-Python twin
        import jsonschema.validators  # type: ignore[import-untyped]
        import referencing

        value = _json_value(schema)
        if not isinstance(value, (dict, bool)):
            raise TypeError(f'schema must be a mapping or a bool, not {type(schema).__name__}')
        cls = validator_class(jsonschema.validators.validator_for(value, default=jsonschema.Draft202012Validator))
        try:
            cls.check_schema(value, format_checker=cls.SCHEMA_FORMAT_CHECKER)
        except jsonschema.SchemaError as exc:
            raise ValueError(f'invalid JSON Schema: {exc.message}') from None
        self._schema = value
        # An empty registry beside the bundled meta-schemas: no `$ref` is ever fetched (the crate is built without
        # its HTTP and file retrievers; the package would fetch over the network).
        self._validator = cls(value, registry=referencing.Registry())
        check_refs(self._validator)

    @property
    def schema(self) -> Any:
        """A copy of the schema."""
        return copy.deepcopy(self._schema)

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` is valid."""
        return self._is_valid(_json_value(instance, 'instance'))

    def _is_valid(self, value: Any) -> bool:
        return not self._failures(value, first=True)

    def _failures(self, value: Any, *, first: bool = False) -> list[Any]:
        """The package's errors for ``value`` (a checked copy), with a fresh ``$ref`` cycle guard."""
        token = ACTIVE_REFS.set(RefState())
        try:
            return list(itertools.islice(self._validator.iter_errors(value), 1 if first else None))
        finally:
            ACTIVE_REFS.reset(token)

    def errors(self, instance: Any) -> list[dict[str, str]]:
        """Every failure as ``{'pointer', 'keyword', 'message'}``."""
        return self._errors(_json_value(instance, 'instance'))

    def _errors(self, value: Any) -> list[dict[str, str]]:
        out = []
        for error in self._failures(value):
            pointer = ''.join('/' + str(p).replace('~', '~0').replace('/', '~1') for p in error.absolute_path)
            if error.validator == 'items' and error.validator_value is False and isinstance(error.instance, list):
                out += _extra_items(pointer, error.instance, len(error.schema.get('prefixItems', ())))
                continue
            keyword = 'falseSchema' if error.validator is None else str(error.validator)  # the crate's name for `false`
            out.append({'pointer': pointer, 'keyword': keyword, 'message': message(error)})
        return out

    def validate(self, instance: Any) -> None:
        """Raise ``SchemaValidationError`` listing every failure."""
        self._raise(_json_value(instance, 'instance'))

    def validate_json(self, data: str | bytes, *, int64: bool = False) -> Any:
        """Parse (as ``parse_arguments``: a JSON object, blank = ``{}``) and validate; returns the value.

        With ``int64``, an integer above ``2**63 - 1`` raises ``ValueError`` before validation.
        """
        value, checked = self._parsed(data, int64)
        self._raise(checked)
        return value

    def check_json(self, data: str | bytes, *, int64: bool = False) -> Any:
        """:meth:`validate_json` that returns the failures (``SchemaValidationError.errors``) instead of raising them."""
        value, checked = self._parsed(data, int64)
        return value if self._is_valid(checked) else self._errors(checked)

    @staticmethod
    def _parsed(data: str | bytes, int64: bool) -> tuple[Any, Any]:
        """``(value, checked copy)`` of ``data`` for :meth:`validate_json` (type, parse and number checks)."""
        if not isinstance(data, (str, bytes)):
            raise TypeError(f'validate_json() expects str or bytes, got {type(data).__name__}')
        value = parse_arguments(data)
        checked = _json_value(value, 'instance')  # checked as the Rust conversion checks it (64-bit ints)
        if int64 and _beyond_int64(checked):
            raise ValueError(BEYOND_INT64)
        return value, checked

    def _raise(self, value: Any) -> None:
        if self._is_valid(value):
            return
        errors = self._errors(value)
        message = '; '.join(f'{e["pointer"] or "/"}: {e["message"]}' for e in errors)
        raise SchemaValidationError(message, errors)

    def __repr__(self) -> str:
        text = json.dumps(self._schema, separators=(',', ':'), ensure_ascii=False)
        return f'SchemaValidator({text[:60]}...)' if len(text) > 60 else f'SchemaValidator({text})'
