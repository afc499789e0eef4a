"""Helpers of the tests that count what the cyclic garbage collector finds after some requests."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def collector_off() -> Iterator[list[int]]:
    """Yields a list that holds, afterwards, how many objects ``gc.collect()`` found unreachable."""
    with garbage_kept() as garbage:
        found: list[int] = []
        yield found
    found.append(len(garbage))


@contextmanager
def garbage_kept() -> Iterator[list[Any]]:
    """Yields a list that holds, afterwards, what ``gc.collect()`` found unreachable (``DEBUG_SAVEALL``).

    The collector is off inside (collected once before); its state and ``gc.garbage`` are restored after.
    """
    found: list[Any] = []
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
    finally:
        gc.collect()
        found.extend(gc.garbage)
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
