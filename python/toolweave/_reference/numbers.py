"""Twin of ``toolweave._core.numbers_fine`` (``rust/py/schema.rs``): a quick pass over the numbers a tool bound.

Used by :mod:`toolweave.tools._numbers` before its full walk: ``True`` means every number inside the
value is surely fine (each exact ``int`` within the signed 64-bit range, each exact ``float``
finite); ``False`` means "look closer", not "invalid".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ['numbers_fine']

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
MAX_DEPTH = 32
"""Deepest container level looked into; deeper containers answer ``False``."""


def numbers_fine(value: Any, model_type: type, enum_type: type) -> bool:
    """Whether every number inside ``value`` is surely fine.

    Looks into exact dicts (keys exact ``str``), lists and tuples, and instances of ``model_type``
    (their ``__dict__`` values and ``__pydantic_extra__``); ``str``, ``bool``, ``None`` and instances
    of ``enum_type`` are fine as they are; anything else answers ``False``.
    """
    return _all_fine((value,), -1, model_type, enum_type)


def _all_fine(items: Iterable[Any], depth: int, model_type: type, enum_type: type) -> bool:
    for item in items:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if INT64_MIN <= item <= INT64_MAX:
                continue
            return False
        if kind is float:
            if math.isfinite(item):
                continue
            return False
        if depth >= MAX_DEPTH or not _container_fine(item, kind, depth + 1, model_type, enum_type):
            return False
    return True


def _container_fine(item: Any, kind: type, depth: int, model_type: type, enum_type: type) -> bool:
    if kind is dict:
        return all(type(key) is str for key in item) and _all_fine(item.values(), depth, model_type, enum_type)
    if kind is list or kind is tuple:
        return _all_fine(item, depth, model_type, enum_type)
    if isinstance(item, model_type):
        extra = item.__pydantic_extra__  # type: ignore[attr-defined]
        return _all_fine(item.__dict__.values(), depth, model_type, enum_type) and (
            not extra or _all_fine(extra.values(), depth, model_type, enum_type)
        )
    return isinstance(item, enum_type)
