"""Streaming aggregation: raw provider bytes -> chunks -> one ``ChatResponse``.

Two levels, as in Spring AI: a provider feeds raw Server-Sent Events bytes to the Rust
:class:`StreamAggregator` (merging tool-call fragments by index), and the tool loop folds the
``ChatResponse`` chunks it forwards into one response with :class:`ChatResponseAggregator`
(Spring's ``MessageAggregator``) to decide whether tools must run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolweave._native import StreamAggregator
from toolweave.chat.messages import AssistantMessage, ToolCall
from toolweave.chat.response import ChatResponse, Generation, Usage

__all__ = ['ChatResponseAggregator', 'StreamAggregator']


@dataclass
class ChatResponseAggregator:
    """Folds streamed ``ChatResponse`` chunks (first choice only) into one response.

    Text deltas are concatenated, whole tool calls collected in order, and the last non-``None``
    id, model, finish reason, usage and metadata win.
    """

    _text: list[str] = field(default_factory=list)
    _tool_calls: list[ToolCall] = field(default_factory=list)
    _finish_reason: str | None = None
    _usage: Usage | None = None
    _id: str | None = None
    _model: str | None = None
    _metadata: dict[str, Any] = field(default_factory=dict)
    _message_metadata: dict[str, Any] = field(default_factory=dict)

    def add(self, chunk: ChatResponse) -> None:
        """Fold one chunk in."""
        self._id = chunk.id or self._id
        self._model = chunk.model or self._model
        self._usage = chunk.usage or self._usage
        self._metadata.update(chunk.metadata)
        if not chunk.generations:
            return
        generation = chunk.generations[0]
        if generation.output.content:
            self._text.append(generation.output.content)
        self._tool_calls.extend(generation.output.tool_calls)
        self._message_metadata.update(generation.output.metadata)
        self._finish_reason = generation.finish_reason or self._finish_reason

    def result(self) -> ChatResponse:
        """The aggregated response so far."""
        message = AssistantMessage(''.join(self._text), tuple(self._tool_calls), dict(self._message_metadata))
        return ChatResponse(
            (Generation(message, self._finish_reason),),
            id=self._id,
            model=self._model,
            usage=self._usage,
            metadata=dict(self._metadata),
        )
