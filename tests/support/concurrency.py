"""Helpers shared by tests that run work on several threads or count the calls of a factory."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def run_threads(threads: list[threading.Thread], timeout: float = 120) -> None:
    """Start ``threads``, join each within ``timeout`` seconds, and assert that none is still running (a hang)."""
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads)


def counting(make: Callable[[], Any]) -> tuple[Callable[[], Any], list[Any]]:
    """A factory that returns ``make()`` and records each value it made, and the list it records them in."""
    made: list[Any] = []

    def factory() -> Any:
        made.append(make())
        return made[-1]

    return factory, made
