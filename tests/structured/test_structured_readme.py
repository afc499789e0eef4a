"""The README's sections of issue 18 (images, entity()) type-check under ``mypy --strict`` as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    'title', ['## Images and files in messages and tool results', '## Structured output: `entity()`']
)
def test_section_examples_pass_mypy_strict(title: str, tmp_path: Path) -> None:
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    section = readme.split(title, 1)[1].split('\n## ', 1)[0]
    blocks = re.findall(r'```python\n(.*?)```', section, re.DOTALL)
    assert blocks
    script = tmp_path / 'example.py'
    script.write_text('\n'.join(blocks), encoding='utf-8')
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--strict', '--no-incremental', str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
