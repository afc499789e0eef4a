"""``ScriptedChatModel``: a chat model that answers from a script, for tests and examples.

Each request takes the next entry of the script: a ready :class:`ChatResponse`, or a function of the
received :class:`Prompt` that builds one (to answer with what the tools returned, for instance).
Every prompt is recorded in :attr:`ScriptedChatModel.prompts`, so a test can check exactly what the
tool loop sent in each round.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Union

import orjson

from toolweave.chat.messages import AssistantMessage, ToolCall
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation, Usage

__all__ = ['ScriptExhaustedError', 'ScriptStep', 'ScriptedChatModel']

ScriptStep = Union[ChatResponse, Callable[[Prompt], ChatResponse]]
"""One entry of a script: a response, or a function from the received prompt to a response."""

_ids = itertools.count(1)


class ScriptExhaustedError(AssertionError):
    """The model was asked more often than its script has entries (an ``AssertionError``: a test bug)."""


def _split_text(text: str, parts: int) -> list[str]:
    """``text`` cut into at most ``parts`` non-empty pieces at word boundaries (whole text if short)."""
    words = text.split(' ')
    if len(words) <= 1 or parts <= 1:
        return [text] if text else []
    size = -(-len(words) // parts)
    pieces = [' '.join(words[i : i + size]) for i in range(0, len(words), size)]
    return [p + ' ' for p in pieces[:-1]] + [pieces[-1]]


class ScriptedChatModel:
    """A :class:`~toolweave.chat.ChatModel` that replays a script of responses in order.

    ``call``, ``acall`` and ``stream`` share one cursor. ``stream`` turns each response into chunks:
    the first generation's text in up to :attr:`stream_parts` deltas, then one chunk with the whole
    tool calls and the finish reason, then the usage on that last chunk (as real providers do with
    ``include_usage``).

    Args:
        responses: The script.
        stream_parts: Number of text deltas a streamed response is cut into (at word boundaries).

    Raises:
        ScriptExhaustedError: When a request arrives after the last entry was used.
    """

    def __init__(self, responses: Sequence[ScriptStep], *, stream_parts: int = 3) -> None:
        self._script: list[ScriptStep] = list(responses)
        self._cursor = 0
        self._lock = threading.Lock()
        self.stream_parts = stream_parts
        self.prompts: list[Prompt] = []
        """Every prompt received, in order (recorded even when the script has run out)."""

    @property
    def remaining(self) -> int:
        """Entries not used yet."""
        return len(self._script) - self._cursor

    def _next(self, prompt: Prompt) -> ChatResponse:
        with self._lock:
            self.prompts.append(prompt)
            if self._cursor >= len(self._script):
                raise ScriptExhaustedError(
                    f'ScriptedChatModel: request {len(self.prompts)} arrived but the script has only '
                    f'{len(self._script)} response(s); last message: {prompt.messages[-1] if prompt.messages else None!r}'
                )
            step = self._script[self._cursor]
            self._cursor += 1
        response = step(prompt) if callable(step) else step
        if not isinstance(response, ChatResponse):
            raise TypeError(f'script entry {self._cursor} produced {type(response).__name__}, not a ChatResponse')
        return response

    def call(self, prompt: Prompt) -> ChatResponse:
        """The next scripted response."""
        return self._next(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """The next scripted response."""
        return self._next(prompt)

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """The next scripted response as chunks: text deltas, then tool calls + finish reason + usage."""
        response = self._next(prompt)
        generation = response.result
        if generation is None:
            yield response
            return
        output = generation.output
        for piece in _split_text(output.text, self.stream_parts):
            yield ChatResponse((Generation(AssistantMessage(piece)),), id=response.id, model=response.model)
        final = AssistantMessage(None, output.tool_calls, output.metadata)
        yield ChatResponse(
            (Generation(final, generation.finish_reason, generation.metadata),),
            id=response.id,
            model=response.model,
            usage=response.usage,
            metadata=response.metadata,
        )

    # -- helpers to keep scripts short ---------------------------------------------------------

    @staticmethod
    def usage(prompt_tokens: int, completion_tokens: int, **details: Mapping[str, int]) -> Usage:
        """A :class:`Usage` with ``total_tokens`` filled in (``details``: ``prompt_tokens_details=...``)."""
        return Usage(
            prompt_tokens,
            completion_tokens,
            prompt_tokens + completion_tokens,
            prompt_tokens_details=details.get('prompt_tokens_details'),
            completion_tokens_details=details.get('completion_tokens_details'),
        )

    @staticmethod
    def text_response(
        text: str, usage: Usage | None = None, *, finish_reason: str = 'stop', model: str = 'scripted'
    ) -> ChatResponse:
        """A plain answer, e.g. ``text_response('It is 18 C.', usage=ScriptedChatModel.usage(10, 5))``."""
        return ChatResponse(
            (Generation(AssistantMessage(text), finish_reason),), id=f'scripted-{next(_ids)}', model=model, usage=usage
        )

    @staticmethod
    def tool_call_response(
        name: str,
        arguments: Mapping[str, Any] | str = '{}',
        id: str | None = None,
        *,
        usage: Usage | None = None,
        text: str | None = None,
        more: Sequence[tuple[str, Mapping[str, Any] | str]] = (),
        finish_reason: str = 'tool_calls',
        model: str = 'scripted',
    ) -> ChatResponse:
        """A response that calls ``name`` with ``arguments`` (a dict is serialised to JSON text).

        Args:
            name: Tool name.
            arguments: The argument object, or its raw JSON text (sent as is, even if invalid).
            id: Tool-call id; ``call_<n>`` when omitted.
            usage: Usage of this round.
            text: Text the model wrote next to the call.
            more: Further ``(name, arguments)`` calls in the same turn (parallel calls).
            finish_reason: Finish reason of the generation.
            model: Reported model name.

        Raises:
            TypeError: an ``arguments`` is neither a mapping nor a ``str`` (the position is named).
        """
        calls = [(name, arguments), *more]
        tool_calls = tuple(
            ToolCall(
                id=(id if i == 0 and id is not None else f'call_{next(_ids)}'),
                type='function',
                name=n,
                arguments=_argument_text(a, 'arguments' if i == 0 else f'more[{i - 1}] arguments'),
            )
            for i, (n, a) in enumerate(calls)
        )
        return ChatResponse(
            (Generation(AssistantMessage(text, tool_calls), finish_reason),),
            id=f'scripted-{next(_ids)}',
            model=model,
            usage=usage,
        )


def _argument_text(arguments: object, where: str) -> str:
    """A scripted call's argument text: a ``str`` as it is, a mapping as JSON.

    Raises:
        TypeError: ``arguments`` is neither (``where`` names it).
    """
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, Mapping):
        return orjson.dumps(dict(arguments)).decode()
    raise TypeError(f'{where} must be a mapping or JSON text (str), not {type(arguments).__name__}')
