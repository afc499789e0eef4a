"""Pure-Python twins of the Rust schema functions (``rust/schema/``): same results, same errors.

One file per Rust module: :mod:`.walks` (the tree walks of ``rust/schema/mod.rs``), :mod:`.dialect`
(``rust/schema/dialect/``), :mod:`.validate` (``rust/schema/validate.rs``), and :mod:`.value` (the JSON value
conversion of the binding, ``rust/py/schema.rs``); :mod:`.keywords`, :mod:`.ecma_regex` and :mod:`.messages` make the
``jsonschema`` package answer, match and word its errors as the crate behind ``validate.rs``.
"""

from __future__ import annotations

from toolweave._reference.schema.dialect import to_dialect
from toolweave._reference.schema.validate import SchemaValidator
from toolweave._reference.schema.walks import forbid_additional_properties, hoist_defs_to_root, upper_case_type_values

__all__ = [
    'SchemaValidator',
    'forbid_additional_properties',
    'hoist_defs_to_root',
    'to_dialect',
    'upper_case_type_values',
]
