"""Stream aggregation and argument parsing vs peers; writes benches/results/{core.md,core.png}.

All numbers of one run come from the same process, as medians of repeated rounds; ratios are
``time / time of the floor`` (orjson.loads of every chunk, or of the whole document), so lower is
faster and 0.5 means twice as fast as the floor. The rounds of a group are interleaved (one round
of every row, then the next), so drift of the shared machine hits every row alike. Nothing here
asserts a timing.

Peers, on every stream including the 200 KB ones: the openai SDK's ``ChatCompletionStreamState``
(chunks built with the SDK's own ``construct_type``), LangChain ``AIMessageChunk`` addition and
litellm's ``stream_chunk_builder`` (openai-chat only; fed the ``ModelResponseStream`` objects its
stream wrapper yields, and separately the plain chunk dicts it also accepts). litellm is the
``peers`` extra, installed by ``make bench`` only; without it its rows are skipped with a printed
reason. The anthropic SDK's ``accumulate_event`` runs on the small streams only (its snapshot is
re-validated per event: quadratic). On the 200 KB streams the peers get one warm-up and 3 rounds;
a peer whose warm-up takes over a minute is measured by that single run, and its row name says so.
Before each group the live objects are frozen out of the garbage collector's view (``gc.freeze``),
so importing the peers does not slow the allocation-heavy rows. Every peer's aggregate (text and
tool-call arguments) is checked against ours before its time is reported. Argument parsing: jiter,
json_repair and fast_json_repair.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import toolweave._core as rust
import toolweave._reference as reference
from _streams import anthropic_stream, openai_stream, partial_fragments

RESULTS = Path(__file__).parent / 'results'
ASKS = 'partial after each of 359 fragments'
ONE_ASK = 'toolweave rust: feed + partial_arguments each fragment'
TWO_ASKS = 'toolweave rust: feed + 2 partial_arguments each fragment'
FEED_ONLY = 'toolweave rust: feed only (no asks)'
ASKS_ALONE = 'toolweave rust: the 359 partial_arguments calls alone (feed + asks minus feed only)'
FIXED = 'the 359 repeated asks on unchanged text (fixed per-call cost)'
INCREMENTAL = 'incremental parse work (asks alone minus fixed per-call cost)'
NO_OP = 'a no-op method call x359 (agg.format getter)'
DERIVED = {ASKS_ALONE, FIXED, INCREMENTAL}
READ = 4096
SLOW_ROUNDS = 3  # peers on the 200 KB streams: one warm-up, then this many rounds of one call
SLOW_SINGLE = 60.0  # seconds: a peer whose warm-up takes longer is measured by that single run...
SLOW_STOP = 60.0  # ...stopped here (LangChain on 200 KB would take ~13 min: quadratic); its time is then a lower bound


class Stopped(Exception):
    """A peer's run passed its deadline after ``done`` of ``total`` chunks."""

    def __init__(self, done: int, total: int, elapsed: float) -> None:
        super().__init__(f'stopped after {done} of {total} chunks in {elapsed:.0f} s')
        self.done, self.total, self.elapsed = done, total, elapsed


def within(payloads: list[bytes], stop_after: float | None) -> Iterator[bytes]:
    """Iterate ``payloads``; raise ``Stopped`` once ``stop_after`` seconds have passed (checked every 64)."""
    if stop_after is None:
        yield from payloads
        return
    start = time.perf_counter()
    for i, p in enumerate(payloads):
        if i % 64 == 0 and time.perf_counter() - start > stop_after:
            raise Stopped(i, len(payloads), time.perf_counter() - start)
        yield p


def settle() -> None:
    """Collect, then freeze what is alive (imported peers, the streams) out of the collector's view.

    Without it every full collection during a timed row scans the ~500k objects that importing the
    peers (litellm above all) leaves behind, which made allocation-heavy rows (the floor, feed())
    about 3x slower depending only on what was imported before.
    """
    gc.collect()
    gc.freeze()


def measure_group(
    cases: dict[str, Callable[[], Any]], budget: float, repeat: int
) -> tuple[dict[str, float], dict[str, Any]]:
    """Median seconds per call of every case, and each case's (warm-up) result.

    Each round runs every case in turn, ``number`` calls each (sized from the warm-up so a round of one
    case takes about ``budget / repeat``), so the rows of a group see the same machine load.
    """
    settle()
    results: dict[str, Any] = {}
    number: dict[str, int] = {}
    for name, fn in cases.items():
        start = time.perf_counter()
        results[name] = fn()
        once = max(time.perf_counter() - start, 1e-7)
        number[name] = max(1, int(budget / repeat / once))
    rounds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            n = number[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            rounds[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(r) for name, r in rounds.items()}, results


def measure_slow(name: str, fn: Callable[[], Any]) -> tuple[str, float, Any]:
    """``(row name, median seconds, result)`` of a slow peer: warm-up + ``SLOW_ROUNDS`` rounds, or one run."""
    settle()
    start = time.perf_counter()
    try:
        result = fn()
    except Stopped as stop:
        row = f'{name} (stopped at {stop.elapsed:.0f} s after {stop.done:,} of {stop.total:,} chunks: lower bound)'
        return row, stop.elapsed, None
    once = time.perf_counter() - start
    if once > SLOW_SINGLE:
        return f'{name} (single run: {once:.0f} s)', once, result
    rounds = []
    for _ in range(SLOW_ROUNDS):
        start = time.perf_counter()
        fn()
        rounds.append(time.perf_counter() - start)
    return f'{name} ({SLOW_ROUNDS} rounds)', statistics.median(rounds), result


def core_runner(cls: Any, fmt: str, body: bytes, method: str = 'feed') -> Callable[[], Any]:
    pieces = [body[i : i + READ] for i in range(0, len(body), READ)]

    def run() -> Any:
        agg = cls(fmt, max_total_bytes=1 << 30)
        feed = getattr(agg, method)
        for piece in pieces:
            feed(piece)
        agg.finish()
        return agg.result()

    return run


def openai_sdk_runner(payloads: list[bytes], stop_after: float | None = None) -> Callable[[], Any]:
    from openai._models import construct_type
    from openai.lib.streaming.chat._completions import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    def run() -> Any:
        state: Any = ChatCompletionStreamState()
        for p in within(payloads, stop_after):
            state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=orjson.loads(p)))
        return state.current_completion_snapshot

    return run


def litellm_import() -> str | None:
    """Import litellm (offline: its bundled model cost map); None if it loads, else the reason it does not."""
    import os

    os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')  # no fetch of the cost map at import
    try:
        import litellm  # noqa: F401
    except ImportError as exc:
        return f'litellm rows skipped: litellm is not installed ({exc}); `make bench` installs the `peers` extra'
    return None


def litellm_runner(payloads: list[bytes], objects: bool) -> Callable[[], Any]:
    """litellm's ``stream_chunk_builder`` over the chunks, as its docs use it after ``completion(stream=True)``.

    ``objects``: build the ``ModelResponseStream`` each chunk is in litellm (what its stream wrapper
    yields and its docs pass); else pass the plain chunk dicts, which it also accepts.
    """
    from litellm import ModelResponseStream, stream_chunk_builder

    def run() -> Any:
        if objects:
            return stream_chunk_builder([ModelResponseStream(**orjson.loads(p)) for p in payloads])
        return stream_chunk_builder([orjson.loads(p) for p in payloads])

    return run


def langchain_runner(payloads: list[bytes], fmt: str, stop_after: float | None = None) -> Callable[[], Any]:
    from langchain_core.messages import AIMessageChunk

    def run() -> Any:
        total: Any = AIMessageChunk(content='')
        for p in within(payloads, stop_after):
            data = orjson.loads(p)
            if fmt == 'openai-chat':
                choices = data.get('choices') or [{}]
                delta = choices[0].get('delta', {})
                calls = [
                    {
                        'index': c.get('index'),
                        'id': c.get('id'),
                        'name': (c.get('function') or {}).get('name'),
                        'args': (c.get('function') or {}).get('arguments'),
                    }
                    for c in delta.get('tool_calls') or []
                ]
                total = total + AIMessageChunk(content=delta.get('content') or '', tool_call_chunks=calls)
            else:
                delta = data.get('delta') or {}
                if data.get('type') == 'content_block_delta' and delta.get('type') == 'text_delta':
                    total = total + AIMessageChunk(content=delta['text'])
                elif data.get('type') == 'content_block_delta':
                    chunk = {'index': data['index'], 'args': delta.get('partial_json')}
                    total = total + AIMessageChunk(content='', tool_call_chunks=[chunk])
                elif data.get('type') == 'content_block_start' and data['content_block']['type'] == 'tool_use':
                    block = data['content_block']
                    chunk = {'index': data['index'], 'id': block['id'], 'name': block['name'], 'args': ''}
                    total = total + AIMessageChunk(content='', tool_call_chunks=[chunk])
        return total

    return run


def anthropic_sdk_runner(payloads: list[bytes]) -> Callable[[], Any]:
    from anthropic._models import construct_type
    from anthropic.lib.streaming._messages import accumulate_event
    from anthropic.types import RawMessageStreamEvent

    def run() -> Any:
        snapshot = None
        bufs: dict[int, bytes] = {}
        for p in payloads:
            event: Any = construct_type(type_=RawMessageStreamEvent, value=orjson.loads(p))
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=bufs)
        return snapshot

    return run


def aggregate_of(name: str, result: Any) -> tuple[str, list[Any]]:
    """``(text, [tool-call arguments])`` of a row's result, to check a peer against ours.

    Arguments are the raw strings, except the anthropic SDK's (it keeps only the parsed ``input``).
    """
    if name.startswith('toolweave'):
        return result['text'], [c['arguments'] for c in result['tool_calls']]
    if name.startswith('LangChain'):
        return result.content, [c['args'] for c in result.tool_call_chunks]
    if name.startswith(('openai SDK', 'litellm')):
        message = result.choices[0].message
        return message.content or '', [c.function.arguments for c in message.tool_calls or []]
    if name.startswith('anthropic SDK'):
        text = ''.join(b.text for b in result.content if b.type == 'text')
        return text, [b.input for b in result.content if b.type == 'tool_use']
    raise AssertionError(name)


def check_peer(name: str, result: Any, ours: dict[str, Any]) -> None:
    """Assert a peer aggregated the same text and tool-call arguments as we did (a fair comparison)."""
    text, args = aggregate_of(name, result)
    want_text, want_args = aggregate_of('toolweave', ours)
    if name.startswith('anthropic SDK'):
        want_args = [json.loads(a) for a in want_args]
    assert text == want_text, (name, text[:80], want_text[:80])
    assert args == want_args, (name, [len(str(a)) for a in args], [len(str(a)) for a in want_args])


STREAMS = {('openai-chat', shape): openai_stream(shape) for shape in ('text', 'tools', 'big')} | {
    ('anthropic', shape): anthropic_stream(shape) for shape in ('text', 'tools', 'big')
}


def stream_cases(fmt: str, shape: str) -> tuple[dict[str, Callable[[], Any]], dict[str, Callable[[], Any]]]:
    """``(ours and the floor, peers)`` for one stream."""
    body, payloads = STREAMS[(fmt, shape)]
    cases: dict[str, Callable[[], Any]] = {
        'orjson.loads per chunk (floor)': lambda: [orjson.loads(p) for p in payloads],
        'toolweave rust feed()': core_runner(rust.StreamAggregator, fmt, body),
        'toolweave rust feed_deltas()': core_runner(rust.StreamAggregator, fmt, body, 'feed_deltas'),
        'toolweave rust feed_text()': core_runner(rust.StreamAggregator, fmt, body, 'feed_text'),
        'toolweave pure-Python twin': core_runner(reference.StreamAggregator, fmt, body),
    }
    stop_after = SLOW_STOP if shape == 'big' else None
    peers: dict[str, Callable[[], Any]] = {'LangChain AIMessageChunk +': langchain_runner(payloads, fmt, stop_after)}
    if fmt == 'openai-chat':
        peers['openai SDK ChatCompletionStreamState'] = openai_sdk_runner(payloads, stop_after)
        if litellm_import() is None:
            peers['litellm stream_chunk_builder (ModelResponseStream chunks)'] = litellm_runner(payloads, True)
            peers['litellm stream_chunk_builder (chunk dicts)'] = litellm_runner(payloads, False)
    elif shape != 'big':
        peers['anthropic SDK accumulate_event'] = anthropic_sdk_runner(payloads)
    return cases, peers


def test_streams_agree() -> None:
    for (fmt, shape), (body, payloads) in STREAMS.items():
        result = core_runner(rust.StreamAggregator, fmt, body)()
        assert result == core_runner(reference.StreamAggregator, fmt, body)()
        assert result['chunks'] == len(payloads), (fmt, shape)
        for call in result['tool_calls']:
            assert isinstance(json.loads(call['arguments']), dict)
        assert core_runner(rust.StreamAggregator, fmt, body, 'feed_text')() == result
        agg = rust.StreamAggregator(fmt, max_total_bytes=1 << 30)
        added = [agg.feed_text(body[i : i + READ]) for i in range(0, len(body), READ)]
        added.append(agg.feed_text(b'', end=True))
        assert ''.join(text for text, _ in added) == result['text'], (fmt, shape)
        assert ''.join(reasoning for _, reasoning in added) == (result['reasoning'] or '')
        if shape == 'text':
            assert len(result['text']) > 1000


def test_small_peers_agree() -> None:
    """Every peer aggregates the small streams as we do (the big ones are checked in the timed run)."""
    for (fmt, shape), (body, _) in STREAMS.items():
        if shape == 'big':
            continue
        ours = core_runner(rust.StreamAggregator, fmt, body)()
        for name, fn in stream_cases(fmt, shape)[1].items():
            check_peer(name, fn(), ours)


def parse_cases() -> dict[str, dict[str, Callable[[], Any]]]:
    import fast_json_repair
    import jiter
    import json_repair
    from toolweave._reference.repair import repair

    fragments = partial_fragments()
    valid = ''.join(fragments)
    truncated = valid[: len(valid) * 2 // 3]
    broken = '```json\n' + valid.replace('"', "'").replace('false', 'False')[:-1] + ',\n```'
    assert repair(broken) is not None
    raw = valid.encode()
    prefixes = [''.join(fragments[: i + 1]) for i in range(len(fragments))]
    start = b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}\n\n'
    events = [
        b'data: '
        + orjson.dumps(
            {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': f}}
        )
        + b'\n\n'
        for f in fragments
    ]

    def feed_and_ask(asks: int) -> Callable[[], Any]:
        def run() -> Any:
            agg = rust.StreamAggregator('anthropic')
            agg.feed(start)
            ask = agg.partial_arguments
            last = None
            for event in events:
                agg.feed(event)
                for _ in range(asks):
                    last = ask(0)
            return last

        return run

    idle = rust.StreamAggregator('anthropic')

    def no_op_x359() -> None:
        agg = idle
        for _ in events:
            agg.format  # noqa: B018

    return {
        'strict (valid 2 KB)': {
            'orjson.loads (floor)': lambda: orjson.loads(raw),
            'toolweave rust strict': lambda: rust.parse_arguments(valid),
            'toolweave rust lenient': lambda: rust.parse_arguments(valid, 'lenient'),
            'jiter.from_json': lambda: jiter.from_json(raw),
            'toolweave pure-Python twin strict': lambda: reference.parse_arguments(valid),
        },
        'partial (2/3 of the text)': {
            'orjson.loads (floor, whole text)': lambda: orjson.loads(raw),
            'toolweave rust partial': lambda: rust.parse_arguments(truncated, 'partial'),
            'jiter trailing-strings': lambda: jiter.from_json(truncated.encode(), partial_mode='trailing-strings'),
        },
        'lenient (fenced, single quotes, False, trailing comma)': {
            'orjson.loads (floor, valid text)': lambda: orjson.loads(raw),
            'toolweave rust lenient': lambda: rust.parse_arguments(broken, 'lenient'),
            'json_repair.loads': lambda: json_repair.loads(broken),
            'fast_json_repair.loads': lambda: fast_json_repair.loads(broken),
        },
        ASKS: {
            'orjson.loads (floor, whole text once)': lambda: orjson.loads(raw),
            'toolweave rust partial, whole text once': lambda: rust.parse_arguments(valid, 'partial'),
            ONE_ASK: feed_and_ask(1),
            TWO_ASKS: feed_and_ask(2),
            FEED_ONLY: feed_and_ask(0),
            NO_OP: no_op_x359,
            'jiter re-parse of every prefix': lambda: [
                jiter.from_json(p.encode(), partial_mode='trailing-strings') for p in prefixes
            ],
        },
    }


def test_asks_agree() -> None:
    cases = parse_cases()[ASKS]
    whole = orjson.loads(''.join(partial_fragments()))
    assert cases[ONE_ASK]() == cases[TWO_ASKS]() == whole
    assert cases[FEED_ONLY]() is None


def write_results(tables: dict[str, dict[str, float]]) -> None:
    RESULTS.mkdir(exist_ok=True)
    lines = [
        '# toolweave core benchmarks',
        '',
        'Same-run medians; ratio = time / floor (lower is faster; the floor is the first row of each group).',
        'Rows in the last group without a "toolweave" prefix, other than the no-op call and jiter, are',
        'differences of two measured medians (see benches/test_bench_formats.py), not measurements.',
        '',
        '| group | implementation | time | ratio to floor |',
        '|---|---|---:|---:|',
    ]
    for group, times in tables.items():
        floor = next(iter(times.values()))
        for name, t in times.items():
            shown = f'{t * 1e6:,.0f} us' if abs(t) >= 1e-4 else f'{t * 1e6:,.2f} us'
            lines.append(f'| {group} | {name} | {shown} | {t / floor:.2f}x |')
    (RESULTS / 'core.md').write_text('\n'.join(lines) + '\n')
    try:
        import matplotlib

        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:  # plotting is a bench-only dependency
        return
    import textwrap

    groups = [g for g in tables if len(tables[g]) > 1]
    heights = [len(tables[g]) - 1 for g in groups]
    fig, axes = plt.subplots(
        len(groups),
        1,
        figsize=(14, 0.34 * sum(heights) + 0.9 * len(groups) + 1),
        gridspec_kw={'height_ratios': [h + 1.6 for h in heights]},
    )
    for ax, group in zip(axes, groups, strict=True):
        times = tables[group]
        floor = next(iter(times.values()))
        names = list(times)[1:]
        ratios = [max(times[n] / floor, 1e-3) for n in names]
        colors = [
            'tab:olive' if n in DERIVED else 'tab:green' if n.startswith('toolweave rust') else 'tab:gray'
            for n in names
        ]
        y = list(range(len(names)))[::-1]
        ax.barh(y, ratios, color=colors)
        ax.set_yticks(y, [textwrap.fill(n, 64) for n in names], fontsize=8)
        for yi, r in zip(y, ratios, strict=True):
            ax.text(r, yi, f' {r:.2f}x', va='center', fontsize=7.5)
        ax.axvline(1.0, color='black', lw=1)
        ax.axvline(0.5, color='tab:red', lw=1, ls='--')
        ax.set_xscale('log')
        ax.set_xlim(0.02, 2e4)  # one scale for every group, so bars compare across groups
        ax.grid(axis='x', which='major', color='0.9')
        ax.set_title(f'{group}   (floor: {next(iter(times))}, {floor * 1e6:,.1f} us)', fontsize=9.5, loc='left')
        ax.tick_params(axis='x', labelsize=8)
    fig.supxlabel(
        'time / floor (log scale; black line = floor, red dashed = 0.5x target; '
        'green = toolweave rust, olive = derived from two medians, gray = others)',
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(RESULTS / 'core.png', dpi=100)


@pytest.mark.benchmark(group='core-report')
def test_write_results(capsys: pytest.CaptureFixture[str]) -> None:
    skipped = litellm_import()
    if skipped:
        with capsys.disabled():
            print(f'\n{skipped}')
    tables: dict[str, dict[str, float]] = {}
    for fmt, shape in STREAMS:
        body, payloads = STREAMS[(fmt, shape)]
        group = f'{fmt} {shape} ({len(payloads)} chunks, {len(body) // 1024} KB)'
        cases, peers = stream_cases(fmt, shape)
        if shape == 'big':
            tables[group], results = measure_group(cases, budget=3.0, repeat=5)
            for name, fn in peers.items():
                row, tables[group][row], results[name] = measure_slow(name, fn)
                with capsys.disabled():
                    print(f'\n{group}: {row}: {tables[group][row]:.2f} s', flush=True)
        else:
            tables[group], results = measure_group(cases | peers, budget=1.0, repeat=9)
        ours = results['toolweave rust feed()']
        for name in [n for n in results if not n.startswith('orjson') and results[n] is not None]:
            check_peer(name, results[name], ours)
    for group, cases in parse_cases().items():
        tables[group] = measure_group(cases, budget=1.5 if group == ASKS else 0.5, repeat=15 if group == ASKS else 7)[0]
    asking = tables[ASKS]
    # The target: all asks together within 2x of one full parse (asks = feed + ask - feed only).
    asking[ASKS_ALONE] = asking[ONE_ASK] - asking[FEED_ONLY]
    # A second ask after the same fragment finds nothing new: what it costs is the fixed cost of a call.
    asking[FIXED] = asking[TWO_ASKS] - asking[ONE_ASK]
    asking[INCREMENTAL] = asking[ASKS_ALONE] - asking[FIXED]
    write_results(tables)
    with capsys.disabled():
        print('\n' + (RESULTS / 'core.md').read_text())
