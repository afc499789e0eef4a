"""The service benchmark (``make bench-service``): one streaming tool-loop endpoint under load, four ways.

Starts the mock provider (``mock_provider.py``: recorded OpenAI-compatible stream envelope, paced at
``--tps`` events per second after ``--ttft`` seconds), then for each service (``apps.py``: toolweave with 1
and 2 uvicorn workers, pydantic-ai, the OpenAI Agents SDK, each on one worker unless stated) starts it
under uvicorn, warms it up, and runs a bounded load generator: ``--concurrency`` async httpx clients, each
sending ``POST /run`` and reading the whole SSE answer, again and again for ``--duration`` seconds.

Reported per service (all from this one run):
- req/s: completed requests per second at that concurrency (the service saturated when its CPU is);
- added latency p50/p99: request latency minus the provider's own pacing, measured by a raw client
  that runs the same two rounds directly against the mock (no framework);
- CPU ms/request: CPU time (user + system) of the service's processes during the load / requests;
- peak RSS of the service's processes, and memory per concurrent request:
  (peak RSS under load - RSS after warm-up) / concurrency.

Writes benches/results/service.md and service.png. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = ROOT / 'benches' / 'results'
QUESTION = {'question': 'What are the weather, the local time and the population of Paris, Tokyo and Lima?'}
TICKS = os.sysconf('SC_CLK_TCK')
SERVICES = [
    ('toolweave', 'toolweave', 1),
    ('toolweave, 2 workers', 'toolweave', 2),
    ('pydantic-ai', 'pydantic-ai', 1),
    ('openai-agents', 'openai-agents', 1),
]


def tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / 'stat').read_text().rsplit(')', 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f'/proc/{pid}/status').read_text().splitlines():
                if line.startswith('VmRSS:'):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


@dataclass
class Load:
    """What one load run saw."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    events: int = 0


async def one_request(client: httpx.AsyncClient, url: str, load: Load) -> None:
    start = time.perf_counter()
    try:
        async with client.stream('POST', url, json=QUESTION) as response:
            response.raise_for_status()
            async for raw in response.aiter_raw():
                load.events += raw.count(b'\n\n')
    except httpx.HTTPError:
        load.errors += 1
        return
    load.latencies.append(time.perf_counter() - start)


async def generate(url: str, concurrency: int, duration: float) -> Load:
    """``concurrency`` clients sending requests back to back until ``duration`` seconds passed."""
    load = Load()
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        end = time.perf_counter() + duration

        async def worker() -> None:
            while time.perf_counter() < end:
                await one_request(client, url, load)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return load


async def floor_latency(mock: str, runs: int = 5) -> list[float]:
    """Latencies of the two provider rounds run directly (raw httpx, no framework): the pacing floor."""
    first = {'model': 'gpt-4o', 'stream': True, 'messages': [{'role': 'user', 'content': 'q'}]}
    second = {**first, 'messages': [*first['messages'], {'role': 'tool', 'tool_call_id': 'c', 'content': 'r'}]}
    times = []
    async with httpx.AsyncClient(timeout=60) as client:
        for _ in range(runs):
            start = time.perf_counter()
            for body in (first, second):
                async with client.stream('POST', f'{mock}/v1/chat/completions', json=body) as response:
                    async for _ in response.aiter_raw():
                        pass
            times.append(time.perf_counter() - start)
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float('nan')


def start_service(app: str, workers: int, mock: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, 'MOCK_URL': mock, 'SERVICE_APP': app}
    command = [sys.executable, '-m', 'uvicorn', 'apps:app', '--app-dir', str(HERE), '--port', str(port)]
    command += ['--workers', str(workers), '--log-level', 'warning', '--no-access-log']
    process = subprocess.Popen(command, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f'http://127.0.0.1:{port}/health', timeout=1).text == 'ok':
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError(f'{app} did not start')


def measure(name: str, app: str, workers: int, mock: str, args: argparse.Namespace) -> dict[str, float]:
    port = args.port
    process = start_service(app, workers, mock, port)
    url = f'http://127.0.0.1:{port}/run'
    try:
        asyncio.run(generate(url, args.concurrency, args.warmup))  # warm-up: imports, pools, caches
        pids = tree(process.pid)
        idle = rss_bytes(pids)
        peak = idle
        cpu_before = cpu_seconds(pids)
        started = time.perf_counter()

        async def with_sampling() -> Load:
            nonlocal peak
            task = asyncio.ensure_future(generate(url, args.concurrency, args.duration))
            while not task.done():
                peak = max(peak, rss_bytes(pids))
                await asyncio.sleep(0.1)
            return task.result()

        load = asyncio.run(with_sampling())
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(pids) - cpu_before
    finally:
        process.terminate()
        process.wait(30)
    done = len(load.latencies)
    print(f'  {name}: {done} requests, {load.errors} errors, {load.events / max(done, 1):.0f} events each', flush=True)
    return {
        'requests': done,
        'errors': load.errors,
        'rps': done / elapsed,
        'p50': percentile(load.latencies, 0.5),
        'p99': percentile(load.latencies, 0.99),
        'cpu_ms': cpu / max(done, 1) * 1e3,
        'peak_rss_mb': peak / 2**20,
        'idle_rss_mb': idle / 2**20,
        'per_request_kb': (peak - idle) / args.concurrency / 1024,
    }


def report(results: dict[str, dict[str, float]], floor: float, args: argparse.Namespace) -> str:
    lines = [
        (
            '| service | req/s | added latency p50 ms | added latency p99 ms | CPU ms/request | peak RSS MB | '
            'memory per concurrent request KB | errors |'
        ),
        '|---|---|---|---|---|---|---|---|',
    ]
    for name, r in results.items():
        lines.append(
            f'| {name} | {r["rps"]:.1f} | {(r["p50"] - floor) * 1e3:.0f} | {(r["p99"] - floor) * 1e3:.0f} | '
            f'{r["cpu_ms"]:.1f} | {r["peak_rss_mb"]:.0f} | {r["per_request_kb"]:.0f} | {r["errors"]:.0f} |'
        )
    peers = {n: results[n]['cpu_ms'] for n in ('pydantic-ai', 'openai-agents') if n in results}
    faster = min(peers, key=peers.__getitem__) if peers else None
    ratios = []  # a run of some services (--only) reports the ratios it has
    if faster is not None and 'toolweave' in results:
        tw = results['toolweave']['cpu_ms']
        ratios.append(
            f'- toolweave CPU per request / {faster} (the faster peer): {tw / peers[faster]:.3f} (target <= 0.2)'
        )
    if 'toolweave' in results and 'toolweave, 2 workers' in results:
        scaling = results['toolweave, 2 workers']['rps'] / results['toolweave']['rps']
        ratios.append(f'- 2 workers / 1 worker throughput: {scaling:.2f}x (target >= 1.7x)')
    setup = (
        f'{args.concurrency} concurrent clients, {args.duration:g} s per service after {args.warmup:g} s warm-up; '
        f'mock provider at {args.tps:g} events/s, time to first token {args.ttft:g} s; provider pacing floor '
        f'(two rounds, raw client) {floor * 1e3:.0f} ms; {os.cpu_count()} CPU cores shared by the service, '
        'the mock provider and the load generator.'
    )
    return '\n'.join([setup, '', *lines, '', *ratios])


def chart(results: dict[str, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    names = list(results)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, key, title in zip(
        axes,
        ('cpu_ms', 'rps', 'per_request_kb'),
        ('CPU ms per request (lower is better)', 'requests/s (higher is better)', 'KB per concurrent request'),
        strict=True,
    ):
        ax.bar(range(len(names)), [results[n][key] for n in names], color=['#4c72b0', '#55a868', '#dd8452', '#c44e52'])
        ax.set_xticks(range(len(names)), [n.replace(', ', '\n') for n in names], fontsize=8)
        ax.set_title(title, fontsize=10)
    fig.suptitle('Streaming tool-loop service: 2 rounds (3 tool calls, ~300-token answer) as SSE run events')
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--duration', type=float, default=20.0, help='seconds of load per service')
    parser.add_argument('--warmup', type=float, default=3.0, help='seconds of load before measuring')
    parser.add_argument('--concurrency', type=int, default=64, help='concurrent clients')
    parser.add_argument('--tps', type=float, default=400.0, help='mock provider events (tokens) per second')
    parser.add_argument('--ttft', type=float, default=0.2, help='mock provider time to first token, seconds')
    parser.add_argument('--port', type=int, default=18765, help='port of the service under test')
    parser.add_argument('--only', nargs='*', help='service names to run (default: all)')
    parser.add_argument('--no-write', action='store_true', help='print only; do not write benches/results')
    args = parser.parse_args()
    mock_process = subprocess.Popen(
        [sys.executable, str(HERE / 'mock_provider.py'), '--tps', str(args.tps), '--ttft', str(args.ttft)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert mock_process.stdout is not None and mock_process.stdin is not None
    mock = f'http://127.0.0.1:{int(mock_process.stdout.readline())}'
    try:
        floor = statistics.median(asyncio.run(floor_latency(mock)))
        results = {}
        for name, app, workers in SERVICES:
            if args.only and name not in args.only:
                continue
            results[name] = measure(name, app, workers, mock, args)
    finally:
        mock_process.stdin.close()
        mock_process.wait(10)
        mock_process.stdout.close()
    text = report(results, floor, args)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / 'service.json').write_text(json.dumps({'floor_s': floor, 'results': results}, indent=1) + '\n')
        (RESULTS / 'service.md').write_text(
            '# Service benchmark (`make bench-service`)\n\n'
            'One run of benches/service/run.py (see its docstring): Starlette under uvicorn, one endpoint that runs\n'
            'a two-round tool loop (3 tool calls, then a ~300-token answer) per request and streams the run events as\n'
            'Server-Sent Events; the same endpoint with pydantic-ai and the OpenAI Agents SDK against the same mock\n'
            'provider in the same run.\n\n' + text + '\n\n![service](service.png)\n'
        )
        chart(results, RESULTS / 'service.png')


if __name__ == '__main__':
    main()
