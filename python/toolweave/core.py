"""The Rust core's public functions: argument parsing, stream aggregation, schema work, usage.

These are the functions of ``toolweave._core`` (the Rust extension), importable from a public module::

    from toolweave.core import parse_arguments, StreamAggregator

    parse_arguments('{"city": "Par', mode='partial')   # {'city': 'Par'}

``IMPLEMENTATION`` says which implementation is in use: ``'rust'``, or ``'reference'`` when the
environment variable ``TOOLWEAVE_PURE=1`` was set before toolweave was imported. The reference is a
pure-Python twin of every function (same results, same exception classes, see
:mod:`toolweave._reference`), kept so users can benchmark the core against pure Python and run on a
platform without the extension. The stubs of ``toolweave._core`` (``_core.pyi``) document each one.
"""

from __future__ import annotations

from toolweave._native import (
    IMPLEMENTATION,
    PartialArguments,
    SchemaValidator,
    StreamAggregator,
    UsageAccumulator,
    forbid_additional_properties,
    hoist_defs_to_root,
    parse_arguments,
    to_dialect,
    upper_case_type_values,
)

__all__ = [
    'IMPLEMENTATION',
    'PartialArguments',
    'SchemaValidator',
    'StreamAggregator',
    'UsageAccumulator',
    'forbid_additional_properties',
    'hoist_defs_to_root',
    'parse_arguments',
    'to_dialect',
    'upper_case_type_values',
]
