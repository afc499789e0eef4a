"""Streaming aggregation: raw provider bytes -> chunks -> one ``ChatResponse``.

Two levels, as in Spring AI: a provider feeds raw Server-Sent Events bytes to the Rust
:class:`StreamAggregator` (merging tool-call fragments by index), and the tool loop folds the
``ChatResponse`` chunks it forwards into one response with :class:`ChatResponseAggregator`
(Spring's ``MessageAggregator``) to decide whether tools must run.

Tool-call fragments: whole tool calls reach the loop once, in a stream's final chunk (the
``ChatModel`` streaming contract), but a chunk may also carry the fragments of tool calls as they
stream, under the response metadata key :data:`TOOL_CALL_DELTAS` (a tuple of :class:`ToolCallDelta`),
so the loop can show arguments filling in. :class:`ToolCallDeltas` reads them from the parsed payloads
of each wire format; the HTTP providers attach them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import orjson

from toolweave._native import StreamAggregator
from toolweave.chat.messages import AssistantMessage, ToolCall
from toolweave.chat.response import ChatResponse, Generation, Usage

__all__ = [
    'TOOL_CALL_DELTAS',
    'ChatResponseAggregator',
    'StreamAggregator',
    'ToolCallDelta',
    'ToolCallDeltas',
    'aggregate_to_chat_response',
    'tool_call_delta_chunk',
    'usage_from_native',
]

TOOL_CALL_DELTAS = 'tool_call_deltas'
"""Response metadata key of a stream chunk: the :class:`ToolCallDelta` fragments it carries (a tuple)."""
_I64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """One fragment of a streamed tool call.

    Attributes:
        index: The call's position among the tool calls of the response (0, 1, ... in order of appearance,
            as in the final chunk's ``tool_calls``).
        id: The call id when this fragment carries it (the first one usually does), else ``None``.
        name: The tool name when this fragment carries it, else ``None``.
        arguments: The new piece of the argument JSON text (``''`` when the fragment only names the call).

    >>> ToolCallDelta(0, 'call_1', 'get_weather', '{"ci').arguments
    '{"ci'
    """

    index: int
    id: str | None
    name: str | None
    arguments: str


class ToolCallDeltas:
    """Reads the tool-call fragments of one stream's parsed payloads, with the core aggregator's merge rules.

    One per stream (it keeps which call each provider index or id belongs to). Per format:
    ``openai-chat`` ``choices[0].delta.tool_calls`` fragments (merged by ``index``, else a known ``id``,
    else a new ``id`` starts a call and an anonymous fragment continues the last one; an ``id`` that differs
    from the one of the call at its index is another call, as Ollama's ``/v1`` sends every call at index 0); ``openai-responses``
    ``function_call`` output items and their ``function_call_arguments.delta`` events (by ``output_index``);
    ``anthropic`` ``tool_use`` blocks and their ``input_json_delta`` pieces (by block index). ``gemini``
    and ``ollama`` send each call whole, so they have no fragments (nor do arguments that arrive only as a
    whole, in a ``...done`` event): the final chunk has those calls.

    >>> deltas = ToolCallDeltas('openai-chat')
    >>> deltas.feed({'choices': [{'delta': {'tool_calls': [{'index': 0, 'id': 'c1', 'function': {'name': 'f'}}]}}]})
    (ToolCallDelta(index=0, id='c1', name='f', arguments=''),)
    >>> deltas.feed({'choices': [{'delta': {'tool_calls': [{'index': 0, 'function': {'arguments': '{"a'}}]}}]})
    (ToolCallDelta(index=0, id=None, name=None, arguments='{"a'),)

    Args:
        format: A :class:`StreamAggregator` format name.

    Raises:
        ValueError: ``format`` is not one of the five formats.
    """

    _READERS = ('openai-chat', 'openai-responses', 'anthropic', 'gemini', 'ollama')

    def __init__(self, format: str) -> None:
        if format not in self._READERS:
            raise ValueError(f'unknown stream format: {format!r}')
        self._format = format
        self._calls = 0
        self._by_key: dict[object, int] = {}
        self._ids: dict[int, str] = {}  # the first id of each call
        self._last: int | None = None

    def feed(self, payload: Mapping[str, Any]) -> tuple[ToolCallDelta, ...]:
        """The fragments in one parsed payload (usually none)."""
        if self._format == 'openai-chat':
            return self._openai_chat(payload)
        if self._format == 'openai-responses':
            return self._responses(payload)
        if self._format == 'anthropic':
            return self._anthropic(payload)
        return ()

    def _new(self, key: object | None) -> int:
        index = self._calls
        self._calls += 1
        if key is not None:
            self._by_key[key] = index
        self._last = index
        return index

    def _openai_chat(self, payload: Mapping[str, Any]) -> tuple[ToolCallDelta, ...]:
        choices = payload.get('choices')
        if type(choices) is not list:
            return ()
        out: list[ToolCallDelta] = []
        for choice in choices:
            # parsed JSON holds plain dicts: the exact type check first (an ABC isinstance costs far more)
            if not (type(choice) is dict or isinstance(choice, Mapping)) or choice.get('index', 0) != 0:
                continue
            delta = choice.get('delta')
            if not (type(delta) is dict or isinstance(delta, Mapping)):
                continue
            fragments = delta.get('tool_calls')
            if type(fragments) is list:
                out.extend(self._chat_fragment(f) for f in fragments if type(f) is dict or isinstance(f, Mapping))
        return tuple(out)

    def _chat_fragment(self, fragment: Mapping[str, Any]) -> ToolCallDelta:
        raw_index = fragment.get('index')
        call_id = _text(fragment.get('id')) or None
        function = fragment.get('function')
        if type(function) is dict or isinstance(function, Mapping):
            name, arguments = _text(function.get('name')), function.get('arguments')
        else:
            name = arguments = None
        if type(raw_index) is int and 0 <= raw_index <= _I64_MAX:
            index = self._by_key.get(raw_index)
            if index is None:
                index = self._new(raw_index)
            elif call_id is not None and self._ids.get(index, call_id) != call_id:  # another call (Ollama /v1)
                known = self._by_key.get(('id', call_id))
                index = self._new(None) if known is None else known
                self._by_key[raw_index] = index
        elif call_id is not None:
            index = self._by_key.get(('id', call_id))
            if index is None:
                index = self._new(None)
        else:
            index = self._last if self._last is not None else self._new(None)
        if call_id is not None:
            self._by_key.setdefault(('id', call_id), index)
            self._ids.setdefault(index, call_id)
        return ToolCallDelta(index, call_id, name or None, _argument_text(arguments))

    def _responses(self, payload: Mapping[str, Any]) -> tuple[ToolCallDelta, ...]:
        kind = payload.get('type')
        key = ('output', payload.get('output_index'))
        if kind == 'response.output_item.added':
            item = payload.get('item')
            if not isinstance(item, Mapping) or item.get('type') != 'function_call' or key in self._by_key:
                return ()
            index = self._new(key)
            call_id, name = _text(item.get('call_id')) or None, _text(item.get('name')) or None
            return (ToolCallDelta(index, call_id, name, _text(item.get('arguments')) or ''),)
        if kind == 'response.function_call_arguments.delta' and key in self._by_key:
            delta = _text(payload.get('delta'))
            return (ToolCallDelta(self._by_key[key], None, None, delta),) if delta else ()
        return ()

    def _anthropic(self, payload: Mapping[str, Any]) -> tuple[ToolCallDelta, ...]:
        kind = payload.get('type')
        key = ('block', payload.get('index'))
        if kind == 'content_block_start':
            block = payload.get('content_block')
            if not isinstance(block, Mapping) or block.get('type') != 'tool_use':
                return ()
            index = self._new(key)
            return (ToolCallDelta(index, _text(block.get('id')) or None, _text(block.get('name')) or None, ''),)
        if kind == 'content_block_delta' and key in self._by_key:
            delta = payload.get('delta')
            if (type(delta) is dict or isinstance(delta, Mapping)) and delta.get('type') == 'input_json_delta':
                piece = _text(delta.get('partial_json'))
                return (ToolCallDelta(self._by_key[key], None, None, piece),) if piece else ()
        return ()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _argument_text(arguments: Any) -> str:
    """Argument text as streamed; an object that arrived decoded as compact JSON."""
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, Mapping):
        try:
            return orjson.dumps(arguments).decode()
        except TypeError:
            return ''
    return ''


def tool_call_delta_chunk(chunk: ChatResponse | None, deltas: tuple[ToolCallDelta, ...]) -> ChatResponse | None:
    """``chunk`` carrying ``deltas`` under :data:`TOOL_CALL_DELTAS` (a new empty chunk when ``chunk`` is ``None``).

    Returns ``chunk`` unchanged when there are no deltas.
    """
    if not deltas:
        return chunk
    if chunk is None:
        return ChatResponse(_NO_OUTPUT, metadata={TOOL_CALL_DELTAS: deltas})
    return dataclasses.replace(chunk, metadata={**chunk.metadata, TOOL_CALL_DELTAS: deltas})


_NO_OUTPUT = (Generation(AssistantMessage(None, (), MappingProxyType({})), None, MappingProxyType({})),)
"""The one generation of every fragment-only chunk: an empty assistant message, shared (it is immutable,
its metadata read-only), so a stream's hundreds of fragment chunks do not build one each."""


@dataclass
class ChatResponseAggregator:
    """Folds streamed ``ChatResponse`` chunks (first choice only) into one response.

    Text and reasoning (message metadata ``reasoning``) deltas are concatenated, whole tool calls
    collected in order, and the last non-``None`` id, model, finish reason, usage and metadata win.
    Tool-call fragments (:data:`TOOL_CALL_DELTAS`) are not kept: the whole calls are.
    """

    _text: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)
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
        if chunk.metadata:
            self._metadata.update(chunk.metadata)
        if not chunk.generations:
            return
        generation = chunk.generations[0]
        output = generation.output
        if output.content:
            self._text.append(output.content)
        if output.tool_calls:
            self._tool_calls.extend(output.tool_calls)
        if output.metadata:
            reasoning = output.metadata.get('reasoning')
            if isinstance(reasoning, str):
                self._reasoning.append(reasoning)
            self._message_metadata.update(output.metadata)
        self._finish_reason = generation.finish_reason or self._finish_reason

    def result(self) -> ChatResponse:
        """The aggregated response so far."""
        message_metadata = dict(self._message_metadata)
        if self._reasoning:
            message_metadata['reasoning'] = ''.join(self._reasoning)
        metadata = dict(self._metadata)
        metadata.pop(TOOL_CALL_DELTAS, None)
        message = AssistantMessage(''.join(self._text), tuple(self._tool_calls), message_metadata)
        return ChatResponse(
            (Generation(message, self._finish_reason),),
            id=self._id,
            model=self._model,
            usage=self._usage,
            metadata=metadata,
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
        # Gemini counts thinking (thoughtsTokenCount) and tool-use prompts (toolUsePromptTokenCount) apart
        # from candidates and prompt, but in totalTokenCount: they are completion and prompt tokens here.
        thoughts = native.get('thoughtsTokenCount')
        return _shape(
            _plus(native.get('promptTokenCount'), native.get('toolUsePromptTokenCount')),
            _plus(native.get('candidatesTokenCount'), thoughts),
            native.get('totalTokenCount'),
            {'cached_tokens': native['cachedContentTokenCount']} if 'cachedContentTokenCount' in native else None,
            {'reasoning_tokens': thoughts} if thoughts is not None else None,
        )
    if format == 'ollama':
        return _shape(native.get('prompt_eval_count'), native.get('eval_count'), None, None, None)
    return dict(native)


def _plus(count: Any, extra: Any) -> Any:
    """``count + extra`` when ``extra`` is an int count (``count`` missing: 0); else ``count`` as it is."""
    if type(extra) is not int or extra < 0:
        return count
    return (count if type(count) is int else 0) + extra


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
    ``*_details``; Gemini prompt = ``promptTokenCount`` + ``toolUsePromptTokenCount``, completion =
    ``candidatesTokenCount`` + ``thoughtsTokenCount`` (so prompt + completion == ``totalTokenCount``),
    reasoning = ``thoughtsTokenCount``; Ollama ``prompt_eval_count``/``eval_count``. Garbage
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
