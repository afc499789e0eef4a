"""``OpenAIChatModel``: any OpenAI-compatible Chat Completions server (OpenAI, vLLM, llama.cpp, Ollama's /v1, Groq).

Transport, retries, timeouts and typed errors come from :class:`~toolweave.providers._base.HttpChatModel`;
this module maps the Chat Completions wire format (:mod:`toolweave.providers._openai_wire`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolweave.chat.options import ChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse
from toolweave.providers._base import HttpChatModel, text_chunk
from toolweave.providers._http import HttpSettings, HttpSettingsArgs
from toolweave.providers._openai_wire import build_request_body, merge_options, parse_completion

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ['OpenAIChatModel']


class OpenAIChatModel(HttpChatModel):
    """A :class:`~toolweave.chat.ChatModel` for the OpenAI Chat Completions API over httpx.

    Tools go out as ``tools[]`` with the plain schema; ``strict=True`` rewrites each schema with the
    ``openai-strict`` dialect and sets ``strict: true`` (never strict by default). ``tool_choice`` and
    ``parallel_tool_calls`` come from :class:`~toolweave.chat.ToolCallingChatOptions`; streams ask
    for ``stream_options.include_usage``.

    Example:
        >>> from toolweave.providers import OpenAIChatModel
        >>> model = OpenAIChatModel(api_key='sk-...', model='gpt-4o-mini')
        >>> model
        OpenAIChatModel(base_url='https://api.openai.com/v1', model='gpt-4o-mini')

    Args:
        base_url: API root; ``/chat/completions`` is appended.
        api_key: Bearer token; ``None`` reads ``OPENAI_API_KEY``; no header when neither is set (local servers).
        model: Model name used when the options carry none.
        default_options: Options under the prompt's; the prompt's win field by field (``None`` = not set).
        settings: Connection settings (:class:`~toolweave.providers.HttpSettings`): timeouts, retries,
            extra headers, borrowed clients, size limit.
        **connection: Any :class:`~toolweave.providers.HttpSettings` field as a keyword (wins over ``settings``).
        strict: Send strict tool schemas (``openai-strict`` dialect).

    Raises:
        ProviderError: From :meth:`call`, :meth:`acall` and :meth:`stream`; the subclass says what failed
            (see :mod:`toolweave.exceptions`).
    """

    provider = 'openai'
    stream_format = 'openai-chat'
    default_base_url = 'https://api.openai.com/v1'
    api_key_env = ('OPENAI_API_KEY',)
    api_key_required = True
    answer_field = ('choices', list)

    def __init__(
        self,
        model: str | None = None,
        default_options: ChatOptions | None = None,
        strict: bool = False,
        *,
        settings: HttpSettings | None = None,
        **connection: Unpack[HttpSettingsArgs],
    ) -> None:
        super().__init__(model, default_options, settings=settings, **connection)
        self.strict = strict

    @property
    def url(self) -> str:
        """The Chat Completions endpoint."""
        return f'{self.base_url}/chat/completions'

    def endpoint(self, body: Mapping[str, Any], *, stream: bool) -> str:
        """The Chat Completions endpoint."""
        return self.url

    def auth_headers(self) -> dict[str, str]:
        """``Authorization: Bearer <key>`` when a key is set."""
        return {'Authorization': f'Bearer {self._api_key}'} if self._api_key else {}

    def _headers(self, stream: bool) -> dict[str, str]:
        return self.headers(stream)

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The JSON body that would be sent for ``prompt`` (options merged over the defaults)."""
        options = merge_options(self.default_options, prompt.options)
        return build_request_body(prompt, options, model=self.model, stream=stream, strict=self.strict)

    def parse_response(self, data: Mapping[str, Any]) -> ChatResponse:
        """A ``chat.completion`` object (see :func:`~toolweave.providers._openai_wire.parse_completion`)."""
        return parse_completion(data)

    def is_success_payload(self, data: Mapping[str, Any]) -> bool:
        """A body with ``choices`` is an answer even when it also has an ``error`` key."""
        return 'choices' in data

    def delta_chunk(self, payload: Mapping[str, Any]) -> ChatResponse | None:
        """``choices[0].delta.content`` as text, ``reasoning_content``/``reasoning`` as reasoning."""
        choices = payload.get('choices')  # parsed JSON: plain dicts and lists (exact type checks are cheapest)
        if type(choices) is not list or not choices or type(choices[0]) is not dict:
            return None
        delta = choices[0].get('delta')
        if type(delta) is not dict:
            return None
        reasoning = delta.get('reasoning_content') or delta.get('reasoning')
        return text_chunk(delta.get('content'), reasoning, id=payload.get('id'), model=payload.get('model'))
