"""Import time beyond bare Python (issue #14 target: at most 0.15 s), from fresh subprocesses in one run.

Each statement runs in a new interpreter (``python -c``), ``ROUNDS`` times interleaved with bare
``python -c pass``; the figure is the best wall time of each, and the difference to bare Python (and
their ratio) comes from the same run. ``-X importtime`` of the slowest statement names what remains.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROUNDS = 15
STATEMENTS = {
    'bare python': 'pass',
    'import toolweave': 'import toolweave',
    'from toolweave import ChatClient, tool': 'from toolweave import ChatClient, tool',
    'import toolweave.providers (names only)': 'import toolweave.providers',
    'OpenAIChatModel': 'from toolweave.providers import OpenAIChatModel',
    'import pydantic TypeAdapter (for scale)': 'from pydantic import TypeAdapter',
}


def best_times() -> dict[str, float]:
    best = {name: float('inf') for name in STATEMENTS}
    for _ in range(ROUNDS):
        for name, statement in STATEMENTS.items():
            start = time.perf_counter()
            subprocess.run([sys.executable, '-c', statement], check=True)
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def heaviest(statement: str, n: int = 8) -> list[tuple[int, str]]:
    """The ``n`` largest self times (us) of ``python -X importtime -c statement``."""
    out = subprocess.run(
        [sys.executable, '-X', 'importtime', '-c', statement], capture_output=True, text=True, check=True
    )
    rows = []
    for line in out.stderr.splitlines()[1:]:
        self_us, _, name = line.removeprefix('import time:').split('|')
        rows.append((int(self_us), name.strip()))
    return sorted(rows, reverse=True)[:n]


def test_import_times(capsys: pytest.CaptureFixture[str]) -> None:
    best = best_times()
    bare = best['bare python']
    lines = ['| statement | best wall ms | beyond bare python ms | ratio to bare |', '|---|---|---|---|']
    for name, seconds in best.items():
        lines.append(f'| {name} | {seconds * 1e3:.1f} | {(seconds - bare) * 1e3:.1f} | {seconds / bare:.2f} |')
    slow = heaviest('from toolweave import ChatClient, tool')
    with capsys.disabled():
        print(f'\n[import time, best of {ROUNDS} fresh interpreters, target <= 150 ms beyond bare]')
        print('\n'.join(lines))
        print('heaviest self times (us) of `from toolweave import ChatClient, tool`:', slow)
    if any('benchmark-enable' in a for a in sys.argv):
        heavy = ', '.join(f'{name} {us / 1e3:.1f} ms' for us, name in slow)
        (Path(__file__).parent / 'results' / 'import.md').write_text(
            '# Import time beyond bare Python\n\nOne run of benches/test_bench_import.py (see its docstring): best of '
            f'{ROUNDS} fresh interpreters each. Target: at most 150 ms beyond bare Python.\n\n'
            + '\n'.join(lines)
            + f'\n\nLargest self times of `from toolweave import ChatClient, tool` (-X importtime): {heavy}.\n'
        )
