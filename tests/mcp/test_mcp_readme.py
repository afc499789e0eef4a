"""The README's MCP section: its Python examples type-check under ``mypy --strict`` as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mcp_examples_pass_mypy_strict(tmp_path: Path) -> None:
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    section = readme.split('## MCP: tools from MCP servers', 1)[1].split('\n## ', 1)[0]
    blocks = re.findall(r'```python\n(.*?)```', section, re.DOTALL)
    assert len(blocks) == 4
    files = []
    for number, block in enumerate(blocks):
        files.append(tmp_path / f'mcp_example_{number}.py')
        files[-1].write_text(block, encoding='utf-8')
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--strict', '--no-incremental', *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
