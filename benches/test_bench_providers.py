"""Provider streaming with default settings against the raw httpx + orjson-per-line floor (issue #14).

A keep-alive loopback server runs in a subprocess (``tests/support/keepalive_server.py``; its CPU is not
counted) and answers each request with a generated stream (``_streams.py``: a 400-token text answer,
or three tool calls in about 600 events), one write per SSE event as providers send them.

- toolweave async: ``model.stream(prompt)`` of a model built with default settings (no client passed in),
  consumed in one event loop (it pools its connection per loop).
- toolweave sync: ``model.stream_sync(prompt)`` (the pooled blocking client, no loop or thread).
- toolweave sync via a private loop (not a target, shown for scale): the async stream iterated from blocking
  code through ``StreamIterator``, as ``ChatClient``'s sync streams do (a private loop run in the iterating
  thread while each chunk is awaited: a new loop, so a new client and connection, per stream).
- floor: one shared ``httpx.AsyncClient``/``httpx.Client`` (connection reused), ``aiter_lines()`` and
  ``orjson.loads`` of every ``data:`` line: the least any client must do.

Figures are CPU time of this process per stream (``time.process_time``, threads included) and wall time,
each the best of ``REPEAT`` interleaved rounds of ``STREAMS`` streams; ratios are from the same run.
Target: toolweave / floor <= 1.5 (CPU) for each row.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from _streams import anthropic_stream, openai_stream
from toolweave.chat import Prompt
from toolweave.client import StreamIterator
from toolweave.providers import AnthropicChatModel, OpenAIChatModel

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / 'benches' / 'results'
STREAMS = 10
REPEAT = 3
CASES = {
    'openai-chat text': ('openai', 'text'),
    'openai-chat tools': ('openai', 'tools'),
    'anthropic text': ('anthropic', 'text'),
    'anthropic tools': ('anthropic', 'tools'),
}


@pytest.fixture(scope='module')
def server() -> Iterator[str]:
    """The subprocess server's URL; ``/<case>/...`` answers with that case's stream."""
    with tempfile.TemporaryDirectory() as directory:
        for name, (provider, shape) in CASES.items():
            body, _ = (openai_stream if provider == 'openai' else anthropic_stream)(shape)
            (Path(directory) / name.replace(' ', '-')).write_bytes(body)
        process = subprocess.Popen(
            [sys.executable, str(ROOT / 'tests' / 'support' / 'keepalive_server.py'), directory],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stdin is not None
        port = int(process.stdout.readline())
        try:
            yield f'http://127.0.0.1:{port}'
        finally:
            process.stdin.close()
            process.wait(10)
            process.stdout.close()


def model_for(url: str, case: str) -> Any:
    base = f'{url}/{case.replace(" ", "-")}'
    if CASES[case][0] == 'openai':
        return OpenAIChatModel(base_url=base + '/v1', api_key='', model='gpt-4o')
    return AnthropicChatModel(base_url=base, api_key='k', model='claude-sonnet-4-5')


def request_of(model: Any) -> tuple[str, bytes, dict[str, str]]:
    url, content, headers = model._prepare(Prompt.of('What is the weather in Paris?'), True)
    return url, content, headers


def data_of(line: str) -> Any:
    return orjson.loads(line[6:]) if line.startswith('data: ') and line != 'data: [DONE]' else None


async def floor_async(client: httpx.AsyncClient, request: tuple[str, bytes, dict[str, str]]) -> int:
    url, content, headers = request
    n = 0
    async with client.stream('POST', url, content=content, headers=headers) as response:
        async for line in response.aiter_lines():
            n += data_of(line) is not None
    return n


def floor_sync(client: httpx.Client, request: tuple[str, bytes, dict[str, str]]) -> int:
    url, content, headers = request
    n = 0
    with client.stream('POST', url, content=content, headers=headers) as response:
        for line in response.iter_lines():
            n += data_of(line) is not None
    return n


async def toolweave_async(model: Any) -> int:
    return len([c async for c in model.stream(Prompt.of('What is the weather in Paris?'))])


def toolweave_sync(model: Any) -> int:
    return len(list(model.stream_sync(Prompt.of('What is the weather in Paris?'))))


def toolweave_private_loop(model: Any) -> int:
    return len(list(StreamIterator(lambda: model.stream(Prompt.of('What is the weather in Paris?')))))


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """(CPU s, wall s) of ``run()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


def measure(url: str, case: str) -> dict[str, tuple[float, float]]:
    """Best (CPU, wall) per stream of each way, over REPEAT interleaved rounds of STREAMS streams."""
    model = model_for(url, case)
    request = request_of(model)
    sync_client = httpx.Client()
    loop = asyncio.new_event_loop()
    async_client = httpx.AsyncClient()

    async def many_floor() -> None:
        for _ in range(STREAMS):
            await floor_async(async_client, request)

    async def many_toolweave() -> None:
        for _ in range(STREAMS):
            await toolweave_async(model)

    ways: dict[str, Callable[[], object]] = {
        'floor async': lambda: loop.run_until_complete(many_floor()),
        'toolweave async': lambda: loop.run_until_complete(many_toolweave()),
        'floor sync': lambda: [floor_sync(sync_client, request) for _ in range(STREAMS)],
        'toolweave sync': lambda: [toolweave_sync(model) for _ in range(STREAMS)],
        'toolweave private-loop': lambda: [toolweave_private_loop(model) for _ in range(STREAMS)],
    }
    for run in ways.values():
        run()  # warm up: connections, caches
    best = {name: (float('inf'), float('inf')) for name in ways}
    for _ in range(REPEAT):
        for name, run in ways.items():
            cpu, wall = timed(run)
            best[name] = (min(best[name][0], cpu / STREAMS), min(best[name][1], wall / STREAMS))
    loop.run_until_complete(async_client.aclose())
    loop.run_until_complete(model.aclose())
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    sync_client.close()
    model.close()
    return best


def test_streams_agree(server: str) -> None:
    """Every way reads the same stream: toolweave yields a chunk per text/tool event plus the final one."""
    for case in CASES:
        model = model_for(server, case)
        request = request_of(model)
        with httpx.Client() as client:
            events = floor_sync(client, request)
        chunks = toolweave_sync(model)
        assert events > 390
        assert chunks > 390
        assert asyncio.run(toolweave_async(model)) == toolweave_private_loop(model) == chunks
        model.close()


def test_provider_stream_ratios(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    rows = []
    for case in CASES:
        best = measure(server, case)
        for mode in ('async', 'sync', 'private-loop'):
            tw, floor = best[f'toolweave {mode}'], best[f'floor {"async" if mode == "async" else "sync"}']
            rows.append((case, mode, tw, floor, tw[0] / floor[0], tw[1] / floor[1]))
    lines = [
        '| stream | mode | toolweave CPU ms | floor CPU ms | CPU ratio | toolweave wall ms | floor wall ms | wall ratio |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for case, mode, tw, floor, cpu_ratio, wall_ratio in rows:
        lines.append(
            f'| {case} | {mode} | {tw[0] * 1e3:.2f} | {floor[0] * 1e3:.2f} | {cpu_ratio:.2f} | '
            f'{tw[1] * 1e3:.2f} | {floor[1] * 1e3:.2f} | {wall_ratio:.2f} |'
        )
    table = '\n'.join(lines)
    with capsys.disabled():
        print(f'\n[provider streams, default settings, per stream, best of {REPEAT} x {STREAMS}]\n{table}')
    if any('benchmark-enable' in a for a in sys.argv):
        write_results(table, rows)


def write_results(table: str, rows: list[tuple[Any, ...]]) -> None:
    """benches/results/providers.md and providers.png (only from a `make bench`-style run)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    (RESULTS / 'providers.md').write_text(
        '# Provider streaming with default settings vs the raw httpx + orjson floor\n\n'
        'One run of benches/test_bench_providers.py (see its docstring). Per stream: CPU time of the client\n'
        f'process and wall time, best of {REPEAT} rounds of {STREAMS} streams over a keep-alive loopback server\n'
        '(a subprocess). Target: CPU ratio <= 1.5 for async and sync; private-loop (the async stream iterated with\n'
        '`for`, on a private loop in the same thread, as ChatClient sync streams do) is for scale, against the\n'
        'sync floor. Run on a machine shared with other work (same-run ratios).\n\n' + table + '\n'
    )
    rows = [r for r in rows if r[1] != 'private-loop']  # off the chart's scale; in the table
    labels = [f'{case}\n{mode}' for case, mode, *_ in rows]
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.bar(
        range(len(rows)),
        [r[4] for r in rows],
        color=[{'async': '#4c72b0', 'sync': '#dd8452'}.get(r[1], '#bbbbbb') for r in rows],
    )
    ax.axhline(1.5, color='red', linestyle='--', label='target 1.5x')
    ax.axhline(1.0, color='grey', linewidth=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=8)
    ax.set_ylabel('CPU per stream / floor')
    ax.set_title('toolweave provider streams (default settings) vs raw httpx + orjson per line')
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / 'providers.png', dpi=110)


# --- thread scaling: does a second thread add throughput to stream aggregation? ----------------------


def aggregate_all(bodies: list[list[bytes]]) -> int:
    """Feed every stream (already split into reads) to its own ``StreamAggregator``; the number of payloads."""
    from toolweave.chat.stream import StreamAggregator

    n = 0
    for pieces in bodies:
        aggregator = StreamAggregator('openai-chat')
        for piece in pieces:
            n += len(aggregator.feed(piece))
        n += len(aggregator.finish())
    return n


def thread_scaling(read: int, streams: int = 40) -> dict[str, float]:
    """Wall and CPU seconds to aggregate ``streams`` tool-call streams (``read``-byte reads) on one and two threads."""
    from concurrent.futures import ThreadPoolExecutor

    body, _ = openai_stream('tools')
    pieces = [body[i : i + read] for i in range(0, len(body), read)]
    bodies = [pieces] * streams
    half = streams // 2
    best = {'one wall': float('inf'), 'one cpu': 0.0, 'two wall': float('inf'), 'two cpu': 0.0}
    with ThreadPoolExecutor(2) as pool:
        for _ in range(REPEAT + 2):
            for way, run in (
                ('one', lambda: aggregate_all(bodies)),
                ('two', lambda: sum(pool.map(aggregate_all, [bodies[:half], bodies[half:]]))),
            ):
                cpu, wall = time.process_time(), time.perf_counter()
                total = run()
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                assert total == aggregate_all(bodies[:1]) * streams
                if wall < best[f'{way} wall']:
                    best[f'{way} wall'], best[f'{way} cpu'] = wall, cpu
    return best


def test_thread_scaling(capsys: pytest.CaptureFixture[str]) -> None:
    """Two threads aggregating two halves of the streams vs one thread doing all (issue #14's thread question).

    ``StreamAggregator.feed`` holds the GIL while it parses (``rust/py`` releases it only around some JSON
    entry points), so two threads can only take turns. ``parallelism`` = CPU seconds / wall seconds of the
    two-thread run: about 1 means they took turns (a wall gain then only reflects a loaded machine handing
    two runnable threads more CPU than one). At provider read sizes (one SSE event, about 200 bytes, up to
    a 4 KB read) a call is microseconds of work, about what releasing and re-taking the GIL costs.
    """
    lines = [
        '| read size | one thread ms | two threads ms | wall gain | parallelism (two threads) |',
        '|---|---|---|---|---|',
    ]
    for read in (200, 4096):
        best = thread_scaling(read)
        lines.append(
            f'| {read} B | {best["one wall"] * 1e3:.1f} | {best["two wall"] * 1e3:.1f} | '
            f'{best["one wall"] / best["two wall"]:.2f}x | {best["two cpu"] / best["two wall"]:.2f} |'
        )
    table = '\n'.join(lines)
    with capsys.disabled():
        print('\n[stream aggregation, 40 tool-call streams of ~600 events, best of rounds]\n' + table)
    if any('benchmark-enable' in a for a in sys.argv):
        (RESULTS / 'threads.md').write_text(
            '# Two threads aggregating streams vs one (the GIL question of issue #14)\n\n'
            'One run of benches/test_bench_providers.py::test_thread_scaling (see its docstring).\n\n' + table + '\n'
        )
