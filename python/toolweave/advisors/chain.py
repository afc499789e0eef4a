"""``DefaultAroundAdvisorChain``: runs advisors in order (Spring AI ``DefaultAroundAdvisorChain``).

The chain is immutable: each step hands the next advisor a view that starts one position further
down, so a chain can be re-entered any number of times. ``copy(after)`` builds a chain of the
advisors after a given one; the ``ToolCallingAdvisor`` uses it to call the rest of the chain once
per round. Advisors are sorted by ``order`` with a stable sort (equal orders keep their insertion order).

A chain built with the public constructor checks the first request it runs: a parameter in its
context that no advisor on the chain declares (``Advisor.advisor_params``) is warned about once per
key and process (:class:`~toolweave.advisors.api.UnknownAdvisorParamWarning`), so a misspelt
``chat_memory_conversaton_id`` does not silently put every user into the ``'default'`` conversation.
"""

from __future__ import annotations

import difflib
import threading
import warnings
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

from toolweave.advisors.api import (
    Advisor,
    CallAdvisor,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisor,
    UnknownAdvisorParamWarning,
)

__all__ = ['DefaultAroundAdvisorChain']


class DefaultAroundAdvisorChain:
    """An ordered chain of advisors; implements ``CallAdvisorChain`` and ``StreamAdvisorChain``.

    Args:
        advisors: The advisors, in any order (sorted here by ``order``, stably).

    Raises:
        LookupError: the chain ran out of advisors before one answered (no terminal model advisor).
        ValueError: ``advisors``, one of them, or a request is ``None``.
        TypeError: an advisor is not an :class:`Advisor`.
    """

    def __init__(self, advisors: Sequence[Advisor], _position: int = 0, *, _sorted: bool = False) -> None:
        if not _sorted:
            _check_advisors(advisors)
        self._advisors: tuple[Advisor, ...] = tuple(advisors) if _sorted else tuple(sorted(advisors, key=_order))
        self._position = _position
        self._check_params = not _sorted
        self._call_step: tuple[CallAdvisor, DefaultAroundAdvisorChain] | None = None
        self._stream_step: tuple[StreamAdvisor, DefaultAroundAdvisorChain] | None = None

    @property
    def advisors(self) -> tuple[Advisor, ...]:
        """All advisors of this chain, in run order."""
        return self._advisors

    def next_call(self, request: ChatClientRequest) -> ChatClientResponse:
        """Run the next :class:`CallAdvisor` (blocking)."""
        self._check(request)
        advisor, rest = self._next_call_step()
        return advisor.advise_call(request, rest)

    async def anext_call(self, request: ChatClientRequest) -> ChatClientResponse:
        """Run the next :class:`CallAdvisor` (async)."""
        self._check(request)
        advisor, rest = self._next_call_step()
        return await advisor.aadvise_call(request, rest)

    def next_stream(self, request: ChatClientRequest) -> AsyncIterator[ChatClientResponse]:
        """Run the next :class:`StreamAdvisor`."""
        self._check(request)
        step = self._stream_step
        if step is None:  # found once: the tool loop enters the same chain every round
            index = self._next_index(StreamAdvisor)
            step = self._stream_step = (cast(StreamAdvisor, self._advisors[index]), self._after(index))
        return step[0].advise_stream(request, step[1])

    def _next_call_step(self) -> tuple[CallAdvisor, DefaultAroundAdvisorChain]:
        """The next call advisor and the chain after it, found once (the chain is immutable)."""
        step = self._call_step
        if step is None:
            index = self._next_index(CallAdvisor)
            step = self._call_step = (cast(CallAdvisor, self._advisors[index]), self._after(index))
        return step

    def _check(self, request: ChatClientRequest) -> None:
        _check_request(request)
        if self._check_params:
            self._check_params = False
            warn_unknown_params(request.context, self._advisors)

    def copy(self, after: Advisor) -> DefaultAroundAdvisorChain:
        """A chain of the advisors after ``after`` (Spring ``copy(CallAdvisor after)``).

        Raises:
            ValueError: ``after`` is ``None`` or not on this chain.
        """
        if after is None:
            raise ValueError('after must not be None')
        for index, advisor in enumerate(self._advisors):
            if advisor is after:
                return DefaultAroundAdvisorChain(self._advisors[index + 1 :], _sorted=True)
        raise ValueError(f'advisor {after.name} is not on this chain')

    def _after(self, index: int) -> DefaultAroundAdvisorChain:
        return DefaultAroundAdvisorChain(self._advisors, index + 1, _sorted=True)

    def _next_index(self, kind: type) -> int:
        for index in range(self._position, len(self._advisors)):
            if isinstance(self._advisors[index], kind):
                return index
        raise LookupError(f'No {kind.__name__} left on the chain: add a model advisor at LOWEST_PRECEDENCE')


_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def warn_unknown_params(context: Mapping[str, Any], advisors: Sequence[Advisor]) -> None:
    """Warn once per key (and process) about ``context`` keys no advisor of ``advisors`` declares.

    Keys starting with ``toolweave.`` (the library's own) and non-string keys are skipped. The
    message names the key, the advisors' declared parameters closest to it, and how to declare one.
    """
    if not context:
        return
    declared: set[str] = set().union(*(a.advisor_params for a in advisors))
    for key in context:
        if not isinstance(key, str) or key.startswith('toolweave.') or key in declared:
            continue
        with _WARNED_LOCK:
            if key in _WARNED:
                continue
            _WARNED.add(key)
        close = difflib.get_close_matches(key, sorted(declared), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ''
        warnings.warn(
            f"advisor parameter '{key}' is read by no advisor on the chain{hint}; it is ignored. "
            'An advisor declares the parameters it reads in its advisor_params class attribute.',
            UnknownAdvisorParamWarning,
            stacklevel=4,
        )


def _order(advisor: Advisor) -> int:
    return advisor.order


def _check_advisors(advisors: Sequence[Advisor] | None) -> None:
    if advisors is None:
        raise ValueError('advisors must not be None')
    for advisor in advisors:
        if advisor is None:
            raise ValueError('advisors must not contain None')
        if not isinstance(advisor, Advisor):
            raise TypeError(f'advisors must be Advisor instances, got {type(advisor).__name__}')


def _check_request(request: ChatClientRequest | None) -> None:
    if request is None:
        raise ValueError('request must not be None')
