"""``GeminiChatModel``: the Gemini API (``generateContent`` / ``streamGenerateContent?alt=sse``).

Wire mapping (Gemini API docs, "Function calling" and "Thought signatures"): system messages go to
``systemInstruction``; turns are ``contents[]`` with role ``user`` or ``model``, each a list of
``parts``; tools go out as one ``functionDeclarations`` list whose schemas pass through the core's
``gemini`` dialect (issue #3); a tool call is a ``functionCall`` part and its result a
``functionResponse`` part in the next ``user`` turn. Gemini 3 returns a ``thoughtSignature`` on the
part that starts a tool call; it must come back unchanged, so the assistant message keeps the parts
the API returned in ``metadata['gemini_parts']`` and they are sent back verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolweave.chat.content import Media
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResponseMessage, UserMessage
from toolweave.chat.options import ChatOptions, OutputSchema, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import StreamAggregator, usage_from_native
from toolweave.providers._base import HttpChatModel, normalized, schema_for, text_chunk
from toolweave.providers._http import HttpSettings, HttpSettingsArgs, decode_json
from toolweave.providers._openai_wire import merge_options
from toolweave.providers._wire import arguments_json, arguments_object
from toolweave.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ['PARTS_KEY', 'GeminiChatModel', 'messages_to_gemini']

PARTS_KEY = 'gemini_parts'
"""Message metadata key of the model parts sent back verbatim (with their thought signatures)."""

_CHOICE_MODES = {'auto': 'AUTO', 'required': 'ANY', 'any': 'ANY', 'none': 'NONE'}


def _response_object(data: str) -> dict[str, Any]:
    """A tool result as ``functionResponse.response``: a JSON object as is, anything else as ``{'result': ...}``."""
    try:
        value = decode_json(data)
    except ValueError:
        return {'result': data}
    return value if isinstance(value, dict) else {'result': value}


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    kept = message.metadata.get(PARTS_KEY)
    if isinstance(kept, Sequence) and kept:
        return [dict(p) for p in kept if isinstance(p, Mapping)]
    extras = message.metadata.get('tool_call_extras')
    extras = extras if isinstance(extras, Mapping) else {}
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({'text': message.content})
    for call in message.tool_calls:
        part: dict[str, Any] = {'functionCall': {'name': call.name, 'args': arguments_object(call.arguments)}}
        extra = extras.get(call.id)
        if isinstance(extra, Mapping) and isinstance(extra.get('thought_signature'), str):
            part['thoughtSignature'] = extra['thought_signature']
        parts.append(part)
    return parts


def _wire_ids(parts: Sequence[Mapping[str, Any]]) -> set[str]:
    ids = set()
    for part in parts:
        call = part.get('functionCall')
        if isinstance(call, Mapping) and isinstance(call.get('id'), str):
            ids.add(call['id'])
    return ids


def gemini_part(part: Media) -> dict[str, Any]:
    """``inlineData`` (bytes, base64) or ``fileData`` (a URL: ``gs://``, a Files API URI, ``https://``) of any media type."""
    if isinstance(part.data, str):
        return {'fileData': {'mimeType': part.media_type, 'fileUri': part.data}}
    return {'inlineData': {'mimeType': part.media_type, 'data': part.base64()}}


def gemini_response_format(output: OutputSchema) -> dict[str, Any]:
    """``generationConfig`` fields of a native JSON-schema output: JSON MIME type, schema in the ``gemini`` dialect."""
    from toolweave.core import to_dialect

    return {'responseMimeType': 'application/json', 'responseSchema': to_dialect(output.schema, 'gemini')}


def messages_to_gemini(messages: Sequence[Message]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(systemInstruction, contents[])`` for ``generateContent``: system texts joined, same-role turns merged.

    A ``functionResponse`` carries the call's ``id`` only when the API gave the call one (ids made up
    by the stream aggregator, ``<responseId>-call-<n>``, are not sent). Media of a user message follow its
    text; media a tool returned follow its ``functionResponse`` in the same turn (:func:`gemini_part`).

    Raises:
        TypeError: For an object that is not one of the four message classes.
    """
    system = [m.text for m in messages if isinstance(m, SystemMessage)]
    contents: list[dict[str, Any]] = []
    wire_ids: set[str] = set()
    for message in messages:
        parts: list[dict[str, Any]]
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, UserMessage):
            text = [{'text': message.text}] if message.text or not message.media else []
            role, parts = 'user', [*text, *(gemini_part(p) for p in message.media)]
        elif isinstance(message, AssistantMessage):
            role, parts = 'model', _model_parts(message)
            wire_ids = _wire_ids(parts)
        elif isinstance(message, ToolResponseMessage):
            role, parts = 'user', []
            for r in message.responses:
                response: dict[str, Any] = {'name': r.name, 'response': _response_object(r.response_data)}
                if r.id in wire_ids:
                    response = {'id': r.id, **response}
                parts.append({'functionResponse': response})
                parts.extend(gemini_part(p) for p in r.media)
        else:
            raise TypeError(f'cannot send a {type(message).__name__} to Gemini')
        if not parts:
            continue
        if contents and contents[-1]['role'] == role:
            contents[-1]['parts'].extend(parts)
        else:
            contents.append({'role': role, 'parts': parts})
    instruction = {'parts': [{'text': '\n\n'.join(system)}]} if system else None
    return instruction, contents


def _declaration(definition: ToolDefinition) -> dict[str, Any]:
    """A ``functionDeclarations`` entry: the schema in the ``gemini`` dialect, no ``parameters`` for a tool without any.

    Gemini rejects an ``OBJECT`` schema with empty ``properties`` and documents ``parameters`` as optional
    (the dialect gives None for such a schema).
    """
    declaration: dict[str, Any] = {'name': definition.name, 'description': definition.description}
    parameters = schema_for(definition.input_schema, 'gemini')
    if parameters is not None:
        declaration['parameters'] = parameters
    return declaration


def _tool_config(choice: str | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    if isinstance(choice, Mapping):
        return dict(choice)
    mode = _CHOICE_MODES.get(choice)
    if mode is not None:
        return {'functionCallingConfig': {'mode': mode}}
    return {'functionCallingConfig': {'mode': 'ANY', 'allowedFunctionNames': [choice]}}


class _SignatureAggregator:
    """The core's ``gemini`` aggregator plus the last thought signature on a part that is not a call.

    Gemini 3 may sign a text answer (the signature arrives on a text part, often an empty one); the
    core keeps only the signatures of calls, so this one is kept here and sent back on the text part.
    """

    def __init__(self) -> None:
        self._inner = StreamAggregator('gemini')
        self._signature: str | None = None

    def _take(self, payloads: list[Any]) -> list[Any]:
        for payload in payloads:
            candidates = payload.get('candidates') if isinstance(payload, Mapping) else None
            if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], Mapping):
                continue
            content = candidates[0].get('content')
            parts = content.get('parts') if isinstance(content, Mapping) else None
            for part in parts if isinstance(parts, list) else ():
                if (
                    isinstance(part, Mapping)
                    and 'functionCall' not in part
                    and isinstance(part.get('thoughtSignature'), str)
                    and part.get('thought') is not True
                ):
                    self._signature = part['thoughtSignature']
        return payloads

    def feed(self, raw: bytes) -> list[Any]:
        return self._take(self._inner.feed(raw))

    def finish(self) -> list[Any]:
        return self._take(self._inner.finish())

    def result(self) -> dict[str, Any]:
        result = dict(self._inner.result())
        result['text_signature'] = self._signature
        return result


def parts_from_stream(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Wire ``parts`` of an aggregated stream: the text (with its signature), then one ``functionCall`` per call."""
    parts: list[dict[str, Any]] = []
    if result.get('text'):
        text_part: dict[str, Any] = {'text': result['text']}
        if isinstance(result.get('text_signature'), str):
            text_part['thoughtSignature'] = result['text_signature']
        parts.append(text_part)
    for call in result.get('tool_calls') or ():
        part: dict[str, Any] = {'functionCall': {'name': call['name'], 'args': arguments_object(call['arguments'])}}
        if isinstance(call.get('thought_signature'), str):
            part['thoughtSignature'] = call['thought_signature']
        parts.append(part)
    return parts


class GeminiChatModel(HttpChatModel):
    """A :class:`~toolweave.chat.ChatModel` for the Gemini API (Google AI Studio ``v1beta``).

    Finish reasons are normalised (``STOP`` -> ``stop``, or ``tool_calls`` when the model called a
    function; ``MAX_TOKENS`` -> ``length``; ``SAFETY``/``RECITATION`` -> ``content_filter``) with the
    native value in ``response.metadata['native_finish_reason']``; usage is mapped from
    ``usageMetadata``: prompt tokens ``promptTokenCount`` + ``toolUsePromptTokenCount``, completion tokens
    ``candidatesTokenCount`` + ``thoughtsTokenCount`` (prompt + completion == ``totalTokenCount``),
    ``thoughtsTokenCount`` also as ``completion_tokens_details['reasoning_tokens']``; native object kept. Thought parts are reasoning
    (``output.metadata['reasoning']``); thought signatures go back on the next round. The key goes in
    the ``x-goog-api-key`` header, never in the URL.

    Example:
        >>> from toolweave.providers import GeminiChatModel
        >>> GeminiChatModel(api_key='AIza...', model='gemini-2.5-flash')
        GeminiChatModel(base_url='https://generativelanguage.googleapis.com/v1beta', model='gemini-2.5-flash')

    Args:
        base_url: API root; ``/models/<model>:generateContent`` is appended.
        api_key: ``x-goog-api-key``; ``None`` reads ``GEMINI_API_KEY`` then ``GOOGLE_API_KEY``.
        model: Model name used when the options carry none.
        default_options: Options under the prompt's.
        settings: Connection settings (:class:`~toolweave.providers.HttpSettings`): timeouts, retries,
            extra headers, borrowed clients, size limit.
        **connection: Any :class:`~toolweave.providers.HttpSettings` field as a keyword (wins over ``settings``).

    Raises:
        ValueError: A request without a model name (the URL needs one).
        ProviderError: See :mod:`toolweave.exceptions`.
    """

    provider = 'gemini'
    stream_format = 'gemini'
    default_base_url = 'https://generativelanguage.googleapis.com/v1beta'
    api_key_env = ('GEMINI_API_KEY', 'GOOGLE_API_KEY')
    api_key_required = True
    answer_field = ('candidates', list)

    def __init__(
        self,
        model: str | None = None,
        default_options: ChatOptions | None = None,
        *,
        settings: HttpSettings | None = None,
        **connection: Unpack[HttpSettingsArgs],
    ) -> None:
        super().__init__(model, default_options, settings=settings, **connection)

    def model_name(self, prompt: Prompt) -> str:
        """The model of ``prompt`` (its options, the defaults, then the constructor's).

        Raises:
            ValueError: None is set.
        """
        options = merge_options(self.default_options, prompt.options)
        name = (options.model if options else None) or self.model
        if not name:
            raise ValueError('GeminiChatModel needs a model name: pass model= or set ChatOptions.model')
        return name.removeprefix('models/')

    def request_url(self, prompt: Prompt, body: Mapping[str, Any], *, stream: bool) -> str:
        """``<base_url>/models/<model of the prompt>:generateContent`` (``:streamGenerateContent?alt=sse``)."""
        method = 'streamGenerateContent?alt=sse' if stream else 'generateContent'
        return f'{self.base_url}/models/{self.model_name(prompt)}:{method}'

    def answer_problem(self, data: Mapping[str, Any]) -> str | None:
        """``candidates`` must be there, unless ``promptFeedback`` says the prompt was blocked."""
        feedback = data.get('promptFeedback')
        if isinstance(feedback, Mapping) and feedback.get('blockReason') and 'candidates' not in data:
            return None
        return super().answer_problem(data)

    def endpoint(self, body: Mapping[str, Any], *, stream: bool) -> str:
        """``<base_url>/models/<model>:generateContent`` (``:streamGenerateContent?alt=sse`` for streams).

        The model is not part of the body, so this form uses the constructor's model.
        """
        method = 'streamGenerateContent?alt=sse' if stream else 'generateContent'
        return f'{self.base_url}/models/{self.model}:{method}'

    def auth_headers(self) -> dict[str, str]:
        """``x-goog-api-key`` when a key is set."""
        return {'x-goog-api-key': self._api_key} if self._api_key else {}

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The ``generateContent`` body: ``systemInstruction``, ``contents``, ``tools``, ``toolConfig``, ``generationConfig``.

        ``stream`` changes only the URL (the body is the same).
        """
        options = merge_options(self.default_options, prompt.options)
        system, contents = messages_to_gemini(prompt.messages)
        body: dict[str, Any] = {}
        if system is not None:
            body['systemInstruction'] = system
        body['contents'] = contents
        if isinstance(options, ToolCallingChatOptions):
            declarations = [_declaration(cb.tool_definition) for cb in options.tool_callbacks]
            if declarations:
                body['tools'] = [{'functionDeclarations': declarations}]
                config = _tool_config(options.tool_choice)
                if config is not None:
                    body['toolConfig'] = config
        if options is not None:
            generation: dict[str, Any] = {}
            for name, wire in (('temperature', 'temperature'), ('top_p', 'topP'), ('max_tokens', 'maxOutputTokens')):
                if getattr(options, name) is not None:
                    generation[wire] = getattr(options, name)
            if options.stop is not None:
                generation['stopSequences'] = list(options.stop)
            if options.output_schema is not None:
                generation.update(gemini_response_format(options.output_schema))
            if generation:
                body['generationConfig'] = generation
            if options.extra_body:
                body.update(options.extra_body)
        return body

    def parse_response(self, data: Mapping[str, Any]) -> ChatResponse:
        """A ``GenerateContentResponse``: candidate 0's text parts joined, thought parts as reasoning, calls."""
        candidates = data.get('candidates')
        candidate = candidates[0] if isinstance(candidates, list) and candidates else {}
        candidate = candidate if isinstance(candidate, Mapping) else {}
        content = candidate.get('content')
        raw_parts = content.get('parts') if isinstance(content, Mapping) else None
        parts = [dict(p) for p in raw_parts if isinstance(p, Mapping)] if isinstance(raw_parts, list) else []
        text = ''.join(p['text'] for p in parts if isinstance(p.get('text'), str) and p.get('thought') is not True)
        thought = ''.join(p['text'] for p in parts if isinstance(p.get('text'), str) and p.get('thought') is True)
        response_id = data.get('responseId') if isinstance(data.get('responseId'), str) else None
        calls: list[ToolCall] = []
        extras: dict[str, dict[str, Any]] = {}
        for part in parts:
            call = part.get('functionCall')
            if not isinstance(call, Mapping):
                continue
            index = len(calls)
            call_id = call.get('id') if isinstance(call.get('id'), str) else None
            call_id = call_id or (f'{response_id}-call-{index}' if response_id else f'call-{index}')
            args = call.get('args')
            calls.append(ToolCall(call_id, 'function', str(call.get('name') or ''), arguments_json(args)))
            if isinstance(part.get('thoughtSignature'), str):
                extras[call_id] = {'thought_signature': part['thoughtSignature']}
        metadata: dict[str, Any] = {PARTS_KEY: [p for p in parts if p.get('thought') is not True]}
        if thought:
            metadata['reasoning'] = thought
        if extras:
            metadata['tool_call_extras'] = extras
        native = candidate.get('finishReason')
        feedback = data.get('promptFeedback')
        if native is None and isinstance(feedback, Mapping) and isinstance(feedback.get('blockReason'), str):
            native = feedback['blockReason']  # the prompt itself was blocked: no candidate at all
        usage = data.get('usageMetadata')
        return ChatResponse(
            (
                Generation(
                    AssistantMessage(text or None, tuple(calls), metadata), normalized('gemini', native, bool(calls))
                ),
            ),
            id=response_id,
            model=data.get('modelVersion') if isinstance(data.get('modelVersion'), str) else None,
            usage=usage_from_native('gemini', usage) if isinstance(usage, Mapping) else None,
            metadata={'native_finish_reason': native},
        )

    def delta_chunk(self, payload: Mapping[str, Any]) -> ChatResponse | None:
        """Candidate 0's text parts as text, its ``thought`` parts as reasoning."""
        candidates = payload.get('candidates')
        if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], Mapping):
            return None
        content = candidates[0].get('content')
        parts = content.get('parts') if isinstance(content, Mapping) else None
        if not isinstance(parts, list):
            return None
        texts = [p for p in parts if isinstance(p, Mapping) and isinstance(p.get('text'), str)]
        text = ''.join(p['text'] for p in texts if p.get('thought') is not True)
        thought = ''.join(p['text'] for p in texts if p.get('thought') is True)
        return text_chunk(text, thought, id=payload.get('responseId'), model=payload.get('modelVersion'))

    def new_aggregator(self) -> Any:
        """The core's ``gemini`` aggregator, also keeping a text part's thought signature."""
        return _SignatureAggregator()

    def message_extras(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """The streamed text and calls as wire parts (with thought signatures), to send back next round."""
        parts = parts_from_stream(result)
        return {PARTS_KEY: parts} if parts else {}
