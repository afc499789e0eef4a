"""The README's approval example: it passes mypy --strict, and its two scripts pause then resume a run in two processes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED_MODEL = """
from toolweave.chat import Prompt, ToolResponseMessage
from toolweave.providers import ScriptedChatModel


def _step(prompt: Prompt) -> object:
    last = prompt.messages[-1]
    if isinstance(last, ToolResponseMessage):
        return ScriptedChatModel.text_response('Done: ' + last.responses[0].response_data)
    return ScriptedChatModel.tool_call_response('transfer_money', {'amount': 250, 'to': 'Bob'}, 'call_1')
"""


def example_scripts(tmp_path: Path) -> dict[str, Path]:
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    section = readme.split('## Human approval, deferred tools and resumable runs', 1)[1].split('\n## ', 1)[0]
    blocks = re.findall(r'```python\n(.*?)```', section, re.DOTALL)
    assert len(blocks) == 3
    paths = {}
    for name, code in zip(('bank', 'pay', 'approve'), blocks, strict=True):
        paths[name] = tmp_path / f'{name}.py'
        paths[name].write_text(code, encoding='utf-8')
    return paths


def test_the_example_passes_mypy_strict(tmp_path: Path) -> None:
    paths = example_scripts(tmp_path)
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--strict', '--no-incremental', *map(str, paths.values())],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def run(script: Path, *args: str, stdin: str = '') -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=script.parent,
    )


def test_pay_pauses_and_approve_resumes_in_another_process(tmp_path: Path) -> None:
    paths = example_scripts(tmp_path)
    bank = paths['bank'].read_text(encoding='utf-8')
    real_model = "OpenAIChatModel(base_url='http://127.0.0.1:8080/v1', model='gpt-4o-mini')"
    assert real_model in bank
    paths['bank'].write_text(SCRIPTED_MODEL + bank.replace(real_model, 'ScriptedChatModel([_step])'), encoding='utf-8')

    paying = run(paths['pay'])
    assert paying.returncode == 0, paying.stderr
    run_id, call_id, name, *rest = paying.stdout.split()
    assert (call_id, name) == ('call_1', 'transfer_money')
    assert ' '.join(rest) == "{'amount': 250, 'to': 'Bob'} Tool 'transfer_money' requires approval."
    assert (tmp_path / 'runs.db').exists()

    approving = run(paths['approve'], run_id, stdin='y\n')
    assert approving.returncode == 0, approving.stderr
    assert approving.stdout.strip().endswith('Done: Transferred 250.00 EUR to Bob.')

    again = run(paths['approve'], run_id, stdin='y\n')
    assert again.returncode != 0 and 'RunAlreadyResumedError' in again.stderr


def test_a_small_transfer_needs_no_approval(tmp_path: Path) -> None:
    paths = example_scripts(tmp_path)
    bank = paths['bank'].read_text(encoding='utf-8')
    small = SCRIPTED_MODEL.replace("'amount': 250", "'amount': 50")
    real_model = "OpenAIChatModel(base_url='http://127.0.0.1:8080/v1', model='gpt-4o-mini')"
    paths['bank'].write_text(small + bank.replace(real_model, 'ScriptedChatModel([_step, _step])'), encoding='utf-8')
    paying = run(paths['pay'])
    assert (paying.returncode, paying.stdout.strip()) == (0, 'Done: Transferred 50.00 EUR to Bob.'), paying.stderr
