"""Tool-call limits per turn (Spring AI 2.0.1 ``ToolCallLimits``).

A turn starts at the last ``UserMessage``; the calls already made in it are counted from its
``ToolResponseMessage``s, plus the calls of the current batch as they run. A call breaches when
its count would exceed the limit, and the check happens before the tool is looked up. A tool
excluded from the per-tool limit still counts toward the total (Spring 2.0.1).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from toolweave.chat.messages import Message, ToolResponseMessage, UserMessage

__all__ = ['Breach', 'ToolCallCounter', 'ToolCallLimitBehavior', 'ToolCallLimits']

DEFAULT_MAX_CALLS_PER_TOOL = 40
DEFAULT_MAX_TOTAL_TOOL_CALLS = 150


class ToolCallLimitBehavior(enum.Enum):
    """What a breach does."""

    THROW = 'throw'
    """Raise ``ToolCallLimitExceededError`` carrying the batch's partial responses (default)."""
    RETURN_ERROR_RESPONSE = 'return_error_response'
    """Put the breach text in that call's response and go on with the next call."""


@dataclass(frozen=True)
class Breach:
    """A call that would exceed a limit (Spring ``ToolCallLimits.Breach``).

    Attributes:
        tool_name: The tool whose per-tool limit it breaches; ``None`` for the total limit.
        limit: The limit.
        text: The response text for the model.
    """

    tool_name: str | None
    limit: int
    text: str


@dataclass(frozen=True)
class ToolCallLimits:
    """Limits of one turn; ``None`` means unlimited.

    >>> limits = ToolCallLimits().max_calls_per_tool(3).max_calls_per_tool(10, tool='search')
    >>> limits.limit_for('search'), limits.limit_for('other')
    (10, 3)

    Attributes:
        per_tool_default: Calls allowed per tool (40).
        total: Calls allowed per turn over all tools (150).
        per_tool: Per-tool overrides (``None`` value = unlimited for that tool).
        excluded: Tools without a per-tool limit (their calls still count toward ``total``, as in Spring 2.0.1).
        behavior: What a breach does.
    """

    per_tool_default: int | None = DEFAULT_MAX_CALLS_PER_TOOL
    total: int | None = DEFAULT_MAX_TOTAL_TOOL_CALLS
    per_tool: Mapping[str, int | None] = field(default_factory=dict)
    excluded: frozenset[str] = frozenset()
    behavior: ToolCallLimitBehavior = ToolCallLimitBehavior.THROW

    def max_calls_per_tool(self, n: int, tool: str | None = None) -> ToolCallLimits:
        """Allow ``n`` calls per tool, or for ``tool`` only (which undoes an exclusion of ``tool``).

        Raises:
            ValueError: ``n`` is not a positive int, or ``tool`` is empty.
        """
        _check_positive(n)
        if tool is None:
            return replace(self, per_tool_default=n)
        _check_tool(tool)
        return replace(self, per_tool={**self.per_tool, tool: n}, excluded=self.excluded - {tool})

    def unlimited_calls_per_tool(self, tool: str | None = None) -> ToolCallLimits:
        """No per-tool limit for ``tool``, or (``None``) for every tool without a limit of its own.

        The calls still count toward the total.

        Raises:
            ValueError: ``tool`` is empty.
        """
        if tool is None:
            return replace(self, per_tool_default=None)
        _check_tool(tool)
        return replace(self, per_tool={**self.per_tool, tool: None})

    def exclude_tool_from_limit(self, tool: str) -> ToolCallLimits:
        """Exempt ``tool`` from the per-tool limit (and drop its own limit); its calls still count toward the total.

        Raises:
            ValueError: ``tool`` is empty.
        """
        _check_tool(tool)
        per_tool = {name: n for name, n in self.per_tool.items() if name != tool}
        return replace(self, per_tool=per_tool, excluded=self.excluded | {tool})

    def max_total_tool_calls(self, n: int) -> ToolCallLimits:
        """Allow ``n`` calls per turn over all tools.

        Raises:
            ValueError: ``n`` is not a positive int.
        """
        _check_positive(n)
        return replace(self, total=n)

    def unlimited_total_tool_calls(self) -> ToolCallLimits:
        """No limit on the calls per turn over all tools."""
        return replace(self, total=None)

    def with_behavior(self, behavior: ToolCallLimitBehavior) -> ToolCallLimits:
        """Change what a breach does.

        Raises:
            TypeError: ``behavior`` is not a ``ToolCallLimitBehavior``.
        """
        if not isinstance(behavior, ToolCallLimitBehavior):
            raise TypeError(f'behavior must be a ToolCallLimitBehavior, not {type(behavior).__name__}')
        return replace(self, behavior=behavior)

    def limit_for(self, tool: str) -> int | None:
        """The per-tool limit that applies to ``tool`` (``None``: unlimited or excluded)."""
        if tool in self.excluded:
            return None
        return self.per_tool.get(tool, self.per_tool_default)


def _check_positive(n: int) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f'n (a tool-call limit) must be a positive int, got {n!r}')


def _check_tool(tool: str) -> None:
    if not isinstance(tool, str) or not tool.strip():
        raise ValueError(f'tool must be a non-empty tool name, got {tool!r}')


class ToolCallCounter:
    """Counts the calls of one turn and tells whether the next call breaches.

    Every call counts, toward its tool's count and the total, whether it ran, was answered with a
    breach text or named an unknown tool: a fresh count of the turn's ``ToolResponseMessage``s sees
    exactly what the running count saw.

    Args:
        limits: The limits.
        history: The turn's messages; calls are counted from ``ToolResponseMessage``s after the
            last ``UserMessage``.
    """

    def __init__(self, limits: ToolCallLimits, history: Iterable[Message]) -> None:
        self._limits = limits
        self._counts: Counter[str] = Counter()
        self._total = 0
        for name in _prior_calls(list(history)):
            self.record(name)

    def breach(self, tool: str) -> Breach | None:
        """The breach if one more call of ``tool`` would exceed a limit, else ``None``."""
        per_tool = self._limits.limit_for(tool)
        if per_tool is not None and self._counts[tool] + 1 > per_tool:
            text = (
                f"Tool call limit ({per_tool}) exceeded for tool '{tool}'. "
                'No further calls to this tool are allowed in this turn.'
            )
            return Breach(tool, per_tool, text)
        total = self._limits.total
        if total is not None and self._total + 1 > total:
            return Breach(
                None,
                total,
                f'Total tool call limit ({total}) exceeded for this turn. No further tool calls are allowed.',
            )
        return None

    def record(self, tool: str) -> None:
        """Count one call of ``tool``."""
        self._counts[tool] += 1
        self._total += 1

    def copy(self) -> ToolCallCounter:
        """An independent counter with the same counts (the manager keeps one per finished batch)."""
        clone = ToolCallCounter(self._limits, ())
        clone._counts = self._counts.copy()
        clone._total = self._total
        return clone


def _prior_calls(history: list[Message]) -> list[str]:
    start = next((i for i in range(len(history) - 1, -1, -1) if isinstance(history[i], UserMessage)), -1)
    return [r.name for m in history[start + 1 :] if isinstance(m, ToolResponseMessage) for r in m.responses]
