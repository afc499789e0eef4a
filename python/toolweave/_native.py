"""The one place that picks the core implementation.

``TOOLWEAVE_PURE=1`` in the environment selects the pure-Python twins in
:mod:`toolweave._reference`; otherwise the Rust extension :mod:`toolweave._core` is used.
Both expose the same API and raise the same exception classes; type checkers see the
``toolweave._core`` stubs, which are the contract.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

__all__ = [
    'IMPLEMENTATION',
    'ArgumentDecoder',
    'PartialArguments',
    'SchemaValidator',
    'StreamAggregator',
    'UsageAccumulator',
    'forbid_additional_properties',
    'hoist_defs_to_root',
    'numbers_fine',
    'parse_arguments',
    'to_dialect',
    'upper_case_type_values',
]

IMPLEMENTATION: str
"""``'rust'`` or ``'reference'``."""

if TYPE_CHECKING:
    from toolweave._core import (
        ArgumentDecoder,
        PartialArguments,
        SchemaValidator,
        StreamAggregator,
        UsageAccumulator,
        forbid_additional_properties,
        hoist_defs_to_root,
        numbers_fine,
        parse_arguments,
        to_dialect,
        upper_case_type_values,
    )

    IMPLEMENTATION = 'rust'
elif os.environ.get('TOOLWEAVE_PURE', '') == '1':
    from toolweave._reference import (
        ArgumentDecoder,
        PartialArguments,
        SchemaValidator,
        StreamAggregator,
        UsageAccumulator,
        forbid_additional_properties,
        hoist_defs_to_root,
        numbers_fine,
        parse_arguments,
        to_dialect,
        upper_case_type_values,
    )

    IMPLEMENTATION = 'reference'
else:
    from toolweave._core import (
        ArgumentDecoder,
        PartialArguments,
        SchemaValidator,
        StreamAggregator,
        UsageAccumulator,
        forbid_additional_properties,
        hoist_defs_to_root,
        numbers_fine,
        parse_arguments,
        to_dialect,
        upper_case_type_values,
    )

    IMPLEMENTATION = 'rust'
