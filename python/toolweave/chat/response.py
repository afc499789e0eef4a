"""Model responses: ``ChatResponse`` > ``Generation`` > ``AssistantMessage``, plus ``Usage``.

As Spring AI's ``ChatResponse``: a response holds one generation per choice; the tool loop looks
at the first generation that has tool calls. Finish reasons are kept as the provider sent them
(``tool_calls``, ``tool_use``, ``stop``, ...) and the loop adds its own (``returnDirect``,
``toolCallLimitExceeded``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolweave.chat.messages import AssistantMessage, ToolCall

__all__ = ['ChatResponse', 'Generation', 'Usage']


_MAX_TOKENS = 2**53
"""Counts at or above this (or negative) are provider garbage: they read as 0 and stay in ``native``."""


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_TOKENS


def _int(value: Any) -> int:
    return value if _is_count(value) else 0


def _details(value: Any) -> dict[str, int] | None:
    if not isinstance(value, Mapping):
        return None
    return {str(k): v for k, v in value.items() if _is_count(v)}


@dataclass(frozen=True)
class Usage:
    """Token usage of one model round or of a whole loop (summed).

    Field names are the OpenAI Chat Completions ones; other providers are mapped onto them.

    Attributes:
        prompt_tokens: Input tokens.
        completion_tokens: Output tokens.
        total_tokens: Their sum as reported by the provider.
        prompt_tokens_details: e.g. ``{'cached_tokens': 405}``; ``None`` when not reported.
        completion_tokens_details: e.g. ``{'reasoning_tokens': 12}``; ``None`` when not reported.
        native: The provider's own usage object, untouched (``None`` for sums).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_tokens_details: Mapping[str, int] | None = None
    completion_tokens_details: Mapping[str, int] | None = None
    native: Mapping[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def from_openai(cls, usage: Mapping[str, Any]) -> Usage:
        """Build from an OpenAI-shaped ``usage`` object; unknown keys stay in :attr:`native`.

        Counts that are not ints in ``[0, 2**53)`` (missing, floats, negative, absurdly large) read as 0
        (details: left out), so a broken provider cannot break the usage sum of a tool loop.
        """
        return cls(
            prompt_tokens=_int(usage.get('prompt_tokens')),
            completion_tokens=_int(usage.get('completion_tokens')),
            total_tokens=_int(usage.get('total_tokens')),
            prompt_tokens_details=_details(usage.get('prompt_tokens_details')),
            completion_tokens_details=_details(usage.get('completion_tokens_details')),
            native=dict(usage),
        )

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI-shaped dict (details omitted when ``None``), as the usage accumulator sums it."""
        out: dict[str, Any] = {
            'prompt_tokens': self.prompt_tokens,
            'completion_tokens': self.completion_tokens,
            'total_tokens': self.total_tokens,
        }
        if self.prompt_tokens_details is not None:
            out['prompt_tokens_details'] = dict(self.prompt_tokens_details)
        if self.completion_tokens_details is not None:
            out['completion_tokens_details'] = dict(self.completion_tokens_details)
        return out


@dataclass(frozen=True)
class Generation:
    """One choice of a response (Spring AI ``Generation``).

    Attributes:
        output: The assistant message.
        finish_reason: The provider's finish reason, or the loop's own (``returnDirect``,
            ``toolCallLimitExceeded``); ``None`` on intermediate stream chunks.
        metadata: Extras such as ``toolId``/``toolName`` on return-direct generations.
    """

    output: AssistantMessage
    finish_reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChatResponse:
    """A model response, or one chunk of a streamed response.

    Attributes:
        generations: One per choice; empty for a usage-only stream chunk.
        id: The provider's response id.
        model: The model name the provider reported.
        usage: Token usage of this response (``None`` when not reported).
        metadata: Provider or loop extras (e.g. ``partialToolResponses``).
    """

    generations: tuple[Generation, ...] = ()
    id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def result(self) -> Generation | None:
        """The first generation, or ``None`` when there is none."""
        return self.generations[0] if self.generations else None

    @property
    def text(self) -> str:
        """Text of the first generation (``''`` when there is none)."""
        return self.generations[0].output.text if self.generations else ''

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Tool calls of the first generation that has any."""
        for generation in self.generations:
            if generation.output.tool_calls:
                return generation.output.tool_calls
        return ()

    def has_tool_calls(self) -> bool:
        """Whether any generation asks for a tool call (Spring ``ChatResponse.hasToolCalls``)."""
        return any(g.output.tool_calls for g in self.generations)

    def has_finish_reasons(self, reasons: set[str] | frozenset[str]) -> bool:
        """Whether any generation finished with one of ``reasons`` (case-insensitive)."""
        wanted = {r.lower() for r in reasons}
        return any((g.finish_reason or '').lower() in wanted for g in self.generations)
