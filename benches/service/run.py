"""The service benchmark (``make bench-service``): one streaming tool-loop endpoint under load, five runs.

Starts the mock provider (``mock_provider.py``: recorded OpenAI-compatible stream envelope, paced at
``--tps`` events per second after ``--ttft`` seconds), then for each run (``apps.py``: toolweave,
pydantic-ai and the OpenAI Agents SDK on one uvicorn worker at ``--concurrency`` clients; then toolweave
on 1 and on 2 workers at ``--scaling-clients`` clients per worker: each client waits for its answer before
it asks again, so the offered load must grow with the workers for two of them to be saturated as one is;
at a fixed client count two workers finish sooner and the clients, not the cores, bound their throughput)
starts the service under uvicorn (uvloop + httptools for every framework), warms it up, and runs a
bounded load generator: that many keep-alive connections, each sending ``POST /run`` and reading the
whole SSE answer, again and again for ``--duration`` seconds. The mock provider and the load generator
are raw asyncio on uvloop (pre-encoded answers and request, minimal parsing) so the two cores go to the
service as far as possible; their own CPU is reported next to the service's.

Reported per run (all from this one invocation):
- req/s: completed requests per second at that concurrency (the service saturated when its CPU is);
- added latency p50/p99: request latency minus the provider's own pacing, measured by a raw client
  that runs the same two rounds directly against the mock (no framework);
- CPU ms/request: CPU time (user + system) of the service's processes during the load / requests;
- harness CPU ms/request: the same for the mock provider and the load generator together;
- CPU share: each one's CPU seconds / (cores x seconds of the run), and what every other process on the
  machine used (other jobs sharing it), so a reader sees how much of the cores the service could get;
- peak RSS of the service's processes, and memory per concurrent request:
  (peak RSS under load - RSS after warm-up) / clients.

Writes benches/results/service.md, service.json and service.png. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import uvloop

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = ROOT / 'benches' / 'results'
QUESTION = {'question': 'What are the weather, the local time and the population of Paris, Tokyo and Lima?'}
TICKS = os.sysconf('SC_CLK_TCK')


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


def request_bytes(port: int) -> bytes:
    """The load generator's one request, encoded once."""
    body = json.dumps(QUESTION).encode()
    head = f'POST /run HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n'
    return head.encode() + b'Content-Length: %d\r\n\r\n' % len(body) + body


async def read_answer(reader: asyncio.StreamReader) -> int:
    """Read one HTTP/1.1 answer; its number of SSE events. Raises ``ValueError`` on a non-200 answer."""
    head = await reader.readuntil(b'\r\n\r\n')
    lower = head.lower()
    if b'transfer-encoding: chunked' not in lower:
        at = lower.find(b'content-length:')
        await reader.readexactly(int(lower[at + 15 :].split(b'\r\n', 1)[0]) if at >= 0 else 0)
        raise ValueError(head.split(b'\r\n', 1)[0].decode())
    events = 0
    while size := int((await reader.readuntil(b'\r\n')).split(b';', 1)[0], 16):
        events += (await reader.readexactly(size + 2)).count(b'\n\n')
    await reader.readexactly(2)
    if not head.startswith(b'HTTP/1.1 200'):
        raise ValueError(head.split(b'\r\n', 1)[0].decode())
    return events


async def generate(port: int, concurrency: int, duration: float) -> Load:
    """``concurrency`` keep-alive connections sending ``POST /run`` back to back until ``duration`` seconds passed.

    A raw asyncio client (one encoded request, chunked framing and a count of SSE event ends, nothing
    parsed further) rather than httpx: its CPU per request is a small share of what httpx would take,
    so the service under test gets the cores. A failed request counts as an error and reconnects.
    """
    load = Load()
    request = request_bytes(port)
    end = time.perf_counter() + duration

    async def worker() -> None:
        writer = None
        while time.perf_counter() < end:
            start = time.perf_counter()
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection('127.0.0.1', port)
                writer.write(request)
                events = await asyncio.wait_for(read_answer(reader), 60)
            except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                load.errors += 1
                if writer is not None:
                    writer.close()
                writer = None
                continue
            load.latencies.append(time.perf_counter() - start)
            load.events += events  # after the await: ``+= await`` would read the count before it
        if writer is not None:
            writer.close()

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


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    values = [int(v) for v in Path('/proc/stat').read_text().split('\n', 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / TICKS, sum(values[:8]) / TICKS


def start_service(app: str, workers: int, mock: str, port: int) -> subprocess.Popen[bytes]:
    """uvicorn with uvloop and httptools (``uvicorn[standard]``), the same shell for every framework."""
    env = {**os.environ, 'MOCK_URL': mock, 'SERVICE_APP': app}
    command = [sys.executable, '-m', 'uvicorn', 'apps:app', '--app-dir', str(HERE), '--port', str(port)]
    command += ['--workers', str(workers), '--loop', 'uvloop', '--http', 'httptools']
    command += ['--log-level', 'warning', '--no-access-log']
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


def measure(app: str, workers: int, clients: int, mock_pid: int, args: argparse.Namespace) -> dict[str, float]:
    """One service under ``clients`` concurrent clients: throughput, latency, CPU (its own, the harness's), memory."""
    port = args.port
    process = start_service(app, workers, args.mock, port)
    try:
        uvloop.run(generate(port, clients, args.warmup))  # warm-up: imports, pools, caches
        pids = tree(process.pid)
        idle = rss_bytes(pids)
        peak = idle
        cpu_before, mock_before = cpu_seconds(pids), cpu_seconds([mock_pid])
        workers_before = [cpu_seconds([pid]) for pid in pids]
        own_before = resource.getrusage(resource.RUSAGE_SELF)
        busy_before, total_before = machine_busy()
        started = time.perf_counter()

        async def with_sampling() -> Load:
            nonlocal peak
            task = asyncio.ensure_future(generate(port, clients, args.duration))
            while not task.done():
                peak = max(peak, rss_bytes(pids))
                await asyncio.sleep(0.1)
            return task.result()

        load = uvloop.run(with_sampling())
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(pids) - cpu_before
        per_process = [cpu_seconds([pid]) - before for pid, before in zip(pids, workers_before, strict=True)]
        own = resource.getrusage(resource.RUSAGE_SELF)
        harness = cpu_seconds([mock_pid]) - mock_before
        harness += own.ru_utime + own.ru_stime - own_before.ru_utime - own_before.ru_stime
        busy, total = machine_busy()
        busy, total = busy - busy_before, total - total_before
    finally:
        process.terminate()
        process.wait(30)
    done = len(load.latencies)
    split = ' / '.join(f'{c:.1f}' for c in sorted(per_process, reverse=True) if c >= 0.05)
    print(
        f'  {app} x{workers}, {clients} clients: {done} requests, {load.errors} errors, '
        f'{load.events / max(done, 1):.0f} events each; CPU s per process {split}',
        flush=True,
    )
    return {
        'clients': clients,
        'requests': done,
        'errors': load.errors,
        'rps': done / elapsed,
        'p50': percentile(load.latencies, 0.5),
        'p99': percentile(load.latencies, 0.99),
        'cpu_ms': cpu / max(done, 1) * 1e3,
        'harness_cpu_ms': harness / max(done, 1) * 1e3,
        'service_share': cpu / total,
        'harness_share': harness / total,
        'other_share': max(0.0, busy - cpu - harness) / total,
        'peak_rss_mb': peak / 2**20,
        'idle_rss_mb': idle / 2**20,
        'per_request_kb': (peak - idle) / clients / 1024,
    }


def report(results: dict[str, dict[str, float]], floor: float, args: argparse.Namespace) -> str:
    lines = [
        (
            '| service | clients | req/s | added latency p50 ms | added latency p99 ms | CPU ms/request | '
            'harness CPU ms/request | CPU share: service / harness / other processes | peak RSS MB | '
            'memory per concurrent request KB | errors |'
        ),
        '|---|---|---|---|---|---|---|---|---|---|---|',
    ]
    for name, r in results.items():
        shares = f'{r["service_share"]:.0%} / {r["harness_share"]:.0%} / {r["other_share"]:.0%}'
        lines.append(
            f'| {name} | {r["clients"]:.0f} | {r["rps"]:.1f} | {(r["p50"] - floor) * 1e3:.0f} | '
            f'{(r["p99"] - floor) * 1e3:.0f} | {r["cpu_ms"]:.1f} | {r["harness_cpu_ms"]:.1f} | {shares} | '
            f'{r["peak_rss_mb"]:.0f} | {r["per_request_kb"]:.0f} | {r["errors"]:.0f} |'
        )
    peers = {n: results[n]['cpu_ms'] for n in ('pydantic-ai', 'openai-agents') if n in results}
    faster = min(peers, key=peers.__getitem__) if peers else None
    ratios = []  # a run of some services (--only) reports the ratios it has
    if faster is not None and 'toolweave' in results:
        tw = results['toolweave']['cpu_ms']
        ratios.append(
            f'- toolweave CPU per request / {faster} (the faster peer): {tw / peers[faster]:.3f} (target <= 0.2)'
        )
    one, two = (scaling_name(workers, args.scaling_clients) for workers in (1, 2))
    if one in results and two in results:
        scaling = results[two]['rps'] / results[one]['rps']
        ratios.append(
            f'- 2 workers / 1 worker throughput, each saturated ({args.scaling_clients} clients per worker): '
            f'{scaling:.2f}x (target >= 1.7x)'
        )
    setup = (
        f'{args.duration:g} s per service after {args.warmup:g} s warm-up; mock provider at {args.tps:g} events/s, '
        f'time to first token {args.ttft:g} s; provider pacing floor (two rounds, raw client) {floor * 1e3:.0f} ms; '
        f'{os.cpu_count()} CPU cores shared by the service, the harness (mock provider and load generator) and '
        f'whatever else runs on the machine (load average at the start {args.load_before:.1f}, at the end '
        f"{os.getloadavg()[0]:.1f}). CPU share: CPU seconds of each / ({os.cpu_count()} cores x the run's seconds)."
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
        ax.bar(
            range(len(names)),
            [results[n][key] for n in names],
            color=['#4c72b0', '#dd8452', '#c44e52', '#8da0cb', '#55a868'],
        )
        ax.set_xticks(range(len(names)), [n.replace(', ', '\n') for n in names], fontsize=8)
        ax.set_title(title, fontsize=10)
    fig.suptitle('Streaming tool-loop service: 2 rounds (3 tool calls, ~300-token answer) as SSE run events')
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def scaling_name(workers: int, per_worker: int) -> str:
    """The row of toolweave on ``workers`` workers at ``per_worker`` clients each."""
    return f'toolweave, {workers} worker{"s" if workers > 1 else ""}, {workers * per_worker} clients'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--duration', type=float, default=20.0, help='seconds of load per service')
    parser.add_argument('--warmup', type=float, default=3.0, help='seconds of load before measuring')
    parser.add_argument('--concurrency', type=int, default=64, help='concurrent clients of the comparison')
    parser.add_argument(
        '--scaling-clients',
        type=int,
        default=192,
        help='concurrent clients per worker of the 1- vs 2-worker comparison',
    )
    parser.add_argument('--tps', type=float, default=400.0, help='mock provider events (tokens) per second')
    parser.add_argument('--ttft', type=float, default=0.2, help='mock provider time to first token, seconds')
    parser.add_argument('--port', type=int, default=18765, help='port of the service under test')
    parser.add_argument('--only', nargs='*', help='apps to run: toolweave, pydantic-ai, openai-agents, scaling')
    parser.add_argument('--no-write', action='store_true', help='print only; do not write benches/results')
    args = parser.parse_args()
    args.load_before = os.getloadavg()[0]
    mock_process = subprocess.Popen(
        [sys.executable, str(HERE / 'mock_provider.py'), '--tps', str(args.tps), '--ttft', str(args.ttft)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert mock_process.stdout is not None and mock_process.stdin is not None
    args.mock = f'http://127.0.0.1:{int(mock_process.stdout.readline())}'
    runs = [(app, app, 1, args.concurrency) for app in ('toolweave', 'pydantic-ai', 'openai-agents')]
    for workers in (1, 2):
        runs.append((scaling_name(workers, args.scaling_clients), 'toolweave', workers, workers * args.scaling_clients))
    try:
        floor = statistics.median(asyncio.run(floor_latency(args.mock)))
        results = {}
        for name, app, workers, clients in runs:
            scaling = ' clients' in name  # the 1- vs 2-worker runs: only with 'scaling' when --only is given
            if args.only and not ('scaling' in args.only if scaling else app in args.only):
                continue
            results[name] = measure(app, workers, clients, mock_process.pid, args)
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
