"""Pure-Python twins of :mod:`toolweave._core`: same API, same results, same exceptions.

They document the behaviour in readable form and serve as the oracle of the differential tests.
Select them at run time with ``TOOLWEAVE_PURE=1`` (see :mod:`toolweave._native`).
"""

from toolweave._reference.decode import ArgumentDecoder
from toolweave._reference.incremental import PartialArguments
from toolweave._reference.json import parse_arguments
from toolweave._reference.numbers import numbers_fine
from toolweave._reference.schema import (
    SchemaValidator,
    forbid_additional_properties,
    hoist_defs_to_root,
    to_dialect,
    upper_case_type_values,
)
from toolweave._reference.stream import StreamAggregator
from toolweave._reference.usage import UsageAccumulator

__all__ = [
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
