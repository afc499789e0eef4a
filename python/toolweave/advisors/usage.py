"""``UsageAccumulator``: token usage summed over the rounds of one tool loop (Spring AI ``UsageAccumulator``).

A facade over the Rust ``UsageAccumulator`` (``TOOLWEAVE_PURE=1`` selects the Python twin). It is
stateful and not thread-safe: one per blocking call or per stream subscription, never shared.
Details (cached and reasoning tokens) are summed key by key; a detail is ``None`` only when every
round's is ``None``. A usage with zero total tokens counts as no usage (Spring ``UsageCalculator.isEmpty``):
it adds nothing, gets no earlier rounds' usage stamped on, and does not stop the final correction.
"""

from __future__ import annotations

from dataclasses import replace

from toolweave._native import UsageAccumulator as _CoreAccumulator
from toolweave.chat.response import ChatResponse, Usage

__all__ = ['UsageAccumulator', 'is_empty']


def is_empty(usage: Usage | None) -> bool:
    """No usage: ``None`` or zero total tokens (Spring ``UsageCalculator.isEmpty``)."""
    return usage is None or usage.total_tokens == 0


def _sum(*usages: Usage) -> Usage | None:
    core = _CoreAccumulator()
    for usage in usages:
        core.add(usage.to_dict())
    total = core.total()
    return None if total is None else replace(Usage.from_openai(total), native=None)


class UsageAccumulator:
    """Accumulates the usage of each round of one loop."""

    def __init__(self) -> None:
        self._core = _CoreAccumulator()

    @property
    def rounds(self) -> int:
        """Rounds that reported usage."""
        return int(self._core.rounds)

    @property
    def accumulated_usage(self) -> Usage | None:
        """The sum so far, or ``None`` when no round reported usage."""
        total = self._core.total()
        return None if total is None else replace(Usage.from_openai(total), native=None)

    def add_round_response(self, chat_response: ChatResponse | None) -> None:
        """Fold one round's usage in (a response without usage adds nothing)."""
        usage = chat_response.usage if chat_response is not None else None
        if usage is not None and not is_empty(usage):
            self._core.add(usage.to_dict())

    def apply_accumulated_usage(self, chat_response: ChatResponse) -> ChatResponse:
        """``chat_response`` with the accumulated usage (blocking loop end, streaming ``return_direct``)."""
        total = self.accumulated_usage
        return chat_response if total is None else replace(chat_response, usage=total)

    def apply_previous_accumulated_usage_to_chunk(self, chunk: ChatResponse) -> ChatResponse:
        """A stream chunk that carries its own usage gets the earlier rounds' usage added."""
        previous, usage = self.accumulated_usage, chunk.usage
        if usage is None or is_empty(usage) or previous is None:
            return chunk
        return replace(chunk, usage=_sum(previous, usage))

    def emit_final_usage_correction_if_necessary(self, last_round: ChatResponse) -> ChatResponse | None:
        """A usage-only response (no generations) carrying the total, when the last round reported none."""
        total = self.accumulated_usage
        if not is_empty(last_round.usage) or total is None:
            return None
        return ChatResponse((), id=last_round.id, model=last_round.model, usage=total)
