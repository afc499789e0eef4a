"""Streaming aggregation: raw provider bytes -> chunks -> one ``ChatResponse``.

Two levels, as in Spring AI: a provider feeds raw Server-Sent Events bytes to the Rust
:class:`StreamAggregator` (merging tool-call fragments by index), and the tool loop folds the
``ChatResponse`` chunks it forwards into one response with :class:`ChatResponseAggregator`
(Spring's ``MessageAggregator``) to decide whether tools must run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolweave._native import StreamAggregator
from toolweave.chat.messages import AssistantMessage, ToolCall
from toolweave.chat.response import ChatResponse, Generation, Usage

__all__ = ['ChatResponseAggregator', 'StreamAggregator', 'aggregate_to_chat_response', 'usage_from_native']


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


def _openai_shape(format: str, native: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI-shaped usage of a provider's own usage object."""
    if format == 'anthropic':
        prompt, completion = native.get('input_tokens'), native.get('output_tokens')
        cached = native.get('cache_read_input_tokens')
        details = {'cached_tokens': cached} if cached is not None else None
        return _shape(prompt, completion, None, details, None)
    if format == 'openai-responses':
        return _shape(
            native.get('input_tokens'),
            native.get('output_tokens'),
            native.get('total_tokens'),
            native.get('input_tokens_details'),
            native.get('output_tokens_details'),
        )
    if format == 'gemini':
        thoughts = native.get('thoughtsTokenCount')
        return _shape(
            native.get('promptTokenCount'),
            native.get('candidatesTokenCount'),
            native.get('totalTokenCount'),
            {'cached_tokens': native['cachedContentTokenCount']} if 'cachedContentTokenCount' in native else None,
            {'reasoning_tokens': thoughts} if thoughts is not None else None,
        )
    if format == 'ollama':
        return _shape(native.get('prompt_eval_count'), native.get('eval_count'), None, None, None)
    return dict(native)


def _shape(prompt: Any, completion: Any, total: Any, prompt_details: Any, completion_details: Any) -> dict[str, Any]:
    if total is None and type(prompt) is int and type(completion) is int:
        total = prompt + completion
    out: dict[str, Any] = {'prompt_tokens': prompt, 'completion_tokens': completion, 'total_tokens': total}
    if prompt_details is not None:
        out['prompt_tokens_details'] = prompt_details
    if completion_details is not None:
        out['completion_tokens_details'] = completion_details
    return out


def usage_from_native(format: str, native: Mapping[str, Any] | None) -> Usage | None:
    """Common :class:`Usage` from a provider's own usage object (kept untouched in ``native``).

    Field mapping: Anthropic ``input_tokens``/``output_tokens`` (cached = ``cache_read_input_tokens``,
    total = their sum); Responses ``input_tokens``/``output_tokens``/``total_tokens`` and their
    ``*_details``; Gemini ``promptTokenCount``/``candidatesTokenCount``/``totalTokenCount``
    (reasoning = ``thoughtsTokenCount``); Ollama ``prompt_eval_count``/``eval_count``. Garbage
    counts read as 0, as in :meth:`Usage.from_openai`.
    """
    if native is None:
        return None
    return dataclasses.replace(Usage.from_openai(_openai_shape(format, native)), native=dict(native))


def aggregate_to_chat_response(result: Mapping[str, Any]) -> ChatResponse:
    """The common ``ChatResponse`` of a ``StreamAggregator.result()`` of any format.

    The generation's ``finish_reason`` is the normalised one (``stop``, ``length``, ``tool_calls``,
    ``content_filter``, ``error``); the provider's own value is in the response metadata as
    ``native_finish_reason``, with ``truncated``, ``format`` and Anthropic ``blocks``. Reasoning text
    goes to the message metadata (``reasoning``), as the OpenAI provider does; per-call extras
    (``item_id``, ``thought_signature``) go to ``tool_call_extras`` keyed by call id.

    Args:
        result: The dict returned by ``StreamAggregator.result()``.

    Returns:
        One response with one generation.
    """
    calls = tuple(
        ToolCall(c['id'], c.get('type') or 'function', c['name'], c['arguments']) for c in result['tool_calls']
    )
    base = {'index', 'id', 'type', 'name', 'arguments'}
    extras = {c['id']: {k: v for k, v in c.items() if k not in base} for c in result['tool_calls']}
    message_metadata: dict[str, Any] = {}
    if result.get('reasoning') is not None:
        message_metadata['reasoning'] = result['reasoning']
    if any(extras.values()):
        message_metadata['tool_call_extras'] = {k: v for k, v in extras.items() if v}
    metadata: dict[str, Any] = {
        'native_finish_reason': result.get('finish_reason'),
        'truncated': result.get('truncated', False),
        'format': result.get('format', 'openai-chat'),
    }
    if result.get('blocks'):
        metadata['blocks'] = result['blocks']
    text = result.get('text') or None
    message = AssistantMessage(text, calls, message_metadata)
    format = result.get('format', 'openai-chat')
    return ChatResponse(
        (Generation(message, result.get('normalized_finish_reason', result.get('finish_reason'))),),
        id=result.get('id'),
        model=result.get('model'),
        usage=usage_from_native(format, result.get('usage')),
        metadata=metadata,
    )
