"""Import time beyond bare Python (issue #14 target: at most 0.15 s), from fresh subprocesses in one run.

Each statement runs in a new interpreter (``python -c``), ``ROUNDS`` times interleaved with bare
``python -c pass``; the figures are the best wall time and the best CPU time (user + system of the
child, which other processes competing for the cores inflate less) of each, and the difference to
bare Python (and their ratio) comes from the same run. ``-X importtime`` of the slowest statement
names what remains. The cold-schema section of the same file is written by
benches/test_bench_schema.py.

The children may write bytecode (``PYTHONDONTWRITEBYTECODE`` is cleared for them): after the first
round every module loads from its ``.pyc``, as in an installed package. With
``TOOLWEAVE_BENCH_BASELINE=<folder holding another toolweave package>`` each toolweave row is also run
with that folder first on ``PYTHONPATH`` (rows marked "baseline"), in the same rounds: a before/after
of a change from one run.
"""

from __future__ import annotations

import os
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
    'import httpx (for scale: OpenAIChatModel needs it)': 'import httpx',
    'import pydantic TypeAdapter (for scale)': 'from pydantic import TypeAdapter',
}
RESULTS = Path(__file__).parent / 'results' / 'import.md'
CHILD_ENV = {**os.environ, 'PYTHONDONTWRITEBYTECODE': ''}
BASELINE = os.environ.get('TOOLWEAVE_BENCH_BASELINE')
START, END = '<!-- import: start -->', '<!-- import: end -->'


def run_once(statement: str, env: dict[str, str] = CHILD_ENV) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one fresh interpreter running ``statement``."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, '-c', statement], env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, statement
    return wall, usage.ru_utime + usage.ru_stime


def cases() -> dict[str, tuple[str, dict[str, str]]]:
    """Row name -> (statement, environment); with a baseline, each toolweave statement once more against it."""
    out = {name: (statement, CHILD_ENV) for name, statement in STATEMENTS.items()}
    if BASELINE:
        env = {**CHILD_ENV, 'PYTHONPATH': os.pathsep.join(filter(None, [BASELINE, os.environ.get('PYTHONPATH')]))}
        for name, statement in STATEMENTS.items():
            if 'toolweave' in statement:
                out[f'{name} (baseline)'] = (statement, env)
    return out


def best_times() -> dict[str, tuple[float, float]]:
    """Per row: the best wall and the best CPU seconds over ``ROUNDS`` interleaved rounds."""
    rows = cases()
    best = {name: (float('inf'), float('inf')) for name in rows}
    for _ in range(ROUNDS):
        for name, (statement, env) in rows.items():
            wall, cpu = run_once(statement, env)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def heaviest(statement: str, n: int = 8) -> list[tuple[int, str]]:
    """The ``n`` largest self times (us) of ``python -X importtime -c statement``."""
    out = subprocess.run(
        [sys.executable, '-X', 'importtime', '-c', statement], capture_output=True, text=True, check=True, env=CHILD_ENV
    )
    rows = []
    for line in out.stderr.splitlines()[1:]:
        self_us, _, name = line.removeprefix('import time:').split('|')
        rows.append((int(self_us), name.strip()))
    return sorted(rows, reverse=True)[:n]


def conditions(load_before: float) -> list[str]:
    """Lines saying under what load the run was, and what the baseline rows ran against (if any)."""
    after = os.getloadavg()[0]
    lines = [f'Load average (1 min) {load_before:.1f} before the run, {after:.1f} after, on {os.cpu_count()} cores.']
    if BASELINE:
        lines.append(f'Rows marked "(baseline)": the same statement with `{BASELINE}` first on PYTHONPATH.')
    return lines


def replace_section(start: str, end: str, lines: list[str]) -> None:
    """Put ``lines`` between ``start`` and ``end`` in results/import.md (replacing an older copy; other sections kept)."""
    text = RESULTS.read_text() if RESULTS.exists() else ''
    if start in text and end in text:
        text = text[: text.index(start)] + text[text.index(end) + len(end) :].lstrip('\n')
    elif '<!--' not in text:  # none yet, or the file from before the sections
        text = '# Import time and cold start\n'
    RESULTS.write_text(text.rstrip('\n') + '\n\n' + '\n'.join([start, *lines, end]) + '\n')


def bar_chart(name: str, bars: dict[str, float], xlabel: str, line: float | None = None) -> str:
    """Draw ``bars`` (label -> value) to results/``name``; the markdown image line.

    Green: toolweave; gray: baseline rows; blue: the others (pydantic, httpx).

    ``line``: a vertical reference line (a target). ``''`` when matplotlib (a bench-only dependency) is missing.
    """
    try:
        import matplotlib

        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return ''
    labels = list(bars)[::-1]
    values = [bars[label] for label in labels]
    fig, ax = plt.subplots(figsize=(11, 0.42 * len(labels) + 1.2))
    colors = [
        'tab:gray' if 'baseline' in n else 'tab:green' if 'toolweave' in n or 'OpenAI' in n else 'tab:blue'
        for n in labels
    ]
    ax.barh(range(len(labels)), values, color=colors)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    for y, value in enumerate(values):
        ax.text(value, y, f' {value:.2f}', va='center', fontsize=7)
    if line is not None:
        ax.axvline(line, color='black', lw=1)
    ax.set_xlabel(xlabel, fontsize=9)
    fig.tight_layout()
    fig.savefig(RESULTS.parent / name, dpi=90)
    plt.close(fig)
    return f'![]({name})'


def test_import_times(capsys: pytest.CaptureFixture[str]) -> None:
    load = os.getloadavg()[0]
    best = best_times()
    bare_wall, bare_cpu = best['bare python']
    lines = [
        '| statement | best wall ms | wall beyond bare ms | best CPU ms | CPU beyond bare ms | wall ratio to bare |',
        '|---|---:|---:|---:|---:|---:|',
    ]
    for name, (wall, cpu) in best.items():
        lines.append(
            f'| {name} | {wall * 1e3:.1f} | {(wall - bare_wall) * 1e3:.1f} | {cpu * 1e3:.1f} | '
            f'{(cpu - bare_cpu) * 1e3:.1f} | {wall / bare_wall:.2f} |'
        )
    slow = heaviest('from toolweave import ChatClient, tool')
    with capsys.disabled():
        print(f'\n[import time, best of {ROUNDS} fresh interpreters, target <= 150 ms beyond bare]')
        print('\n'.join(lines))
        print('heaviest self times (us) of `from toolweave import ChatClient, tool`:', slow)
    if any('benchmark-enable' in a for a in sys.argv):
        heavy = ', '.join(f'{name} {us / 1e3:.1f} ms' for us, name in slow)
        section = [
            '## Import time beyond bare Python',
            '',
            f'One run of benches/test_bench_import.py (see its docstring): best of {ROUNDS} fresh interpreters each,',
            'interleaved. Target: at most 150 ms beyond bare Python.',
            *conditions(load),
            '',
            *lines,
            '',
            f'Largest self times of `from toolweave import ChatClient, tool` (-X importtime): {heavy}.',
            '',
            bar_chart(
                'import.png',
                {name: (cpu - bare_cpu) * 1e3 for name, (_, cpu) in best.items() if name != 'bare python'},
                'CPU ms beyond bare Python (best of the rounds)',
            ),
        ]
        replace_section(START, END, section)
