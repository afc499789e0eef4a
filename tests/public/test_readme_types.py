"""The README's quick start type-checks under ``mypy --strict`` as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_start_passes_mypy_strict(tmp_path: Path) -> None:
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    section = readme.split('## Quick start', 1)[1]
    quick_start = re.search(r'```python\n(.*?)```', section, re.DOTALL)
    assert quick_start is not None
    script = tmp_path / 'quick_start.py'
    script.write_text(quick_start.group(1), encoding='utf-8')
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--strict', '--no-incremental', str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Success' in result.stdout
