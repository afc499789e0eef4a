"""Stream aggregation and argument parsing vs peers; writes benches/results/{core.md,core.png}.

All numbers of one run come from the same process, as medians of repeated rounds; ratios are
``time / time of the floor`` (orjson.loads of every chunk, or of the whole document), so lower is
faster and 0.5 means twice as fast as the floor. Nothing here asserts a timing.

Peers: the openai SDK's ``ChatCompletionStreamState`` (chunks built with the SDK's own
``construct_type``), LangChain ``AIMessageChunk`` addition, the anthropic SDK's ``accumulate_event``
(its snapshot is re-validated per event: small streams only), jiter, json_repair and
fast_json_repair. litellm's ``stream_chunk_builder`` is not measured (litellm is not installed:
its dependency tree is too heavy for the bench extra). Peers are skipped on the 200 KB streams
(their accumulation copies the growing argument string on every chunk).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import toolweave._core as rust
import toolweave._reference as reference
from _streams import anthropic_stream, openai_stream, partial_fragments

RESULTS = Path(__file__).parent / 'results'
ASKS = 'partial after each of 359 fragments'
ASKS_ALONE = 'toolweave rust: the 359 partial_arguments calls alone (feed + asks minus feed only)'
READ = 4096


def median_time(fn: Callable[[], object], budget: float = 0.4, repeat: int = 5) -> float:
    """Median seconds per call over ``repeat`` rounds sized to take about ``budget / repeat`` each."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(budget / repeat / once))
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number)
    return statistics.median(rounds)


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


def openai_sdk_runner(payloads: list[bytes]) -> Callable[[], Any]:
    from openai._models import construct_type
    from openai.lib.streaming.chat._completions import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    def run() -> Any:
        state: Any = ChatCompletionStreamState()
        for p in payloads:
            state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=orjson.loads(p)))
        return state.current_completion_snapshot

    return run


def langchain_runner(payloads: list[bytes], fmt: str) -> Callable[[], Any]:
    from langchain_core.messages import AIMessageChunk

    def run() -> Any:
        total: Any = AIMessageChunk(content='')
        for p in payloads:
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


STREAMS = {('openai-chat', shape): openai_stream(shape) for shape in ('text', 'tools', 'big')} | {
    ('anthropic', shape): anthropic_stream(shape) for shape in ('text', 'tools', 'big')
}


def stream_cases(fmt: str, shape: str) -> dict[str, Callable[[], Any]]:
    body, payloads = STREAMS[(fmt, shape)]
    cases: dict[str, Callable[[], Any]] = {
        'orjson.loads per chunk (floor)': lambda: [orjson.loads(p) for p in payloads],
        'toolweave rust feed()': core_runner(rust.StreamAggregator, fmt, body),
        'toolweave rust feed_deltas()': core_runner(rust.StreamAggregator, fmt, body, 'feed_deltas'),
        'toolweave pure-Python twin': core_runner(reference.StreamAggregator, fmt, body),
    }
    if shape != 'big':
        cases['LangChain AIMessageChunk +'] = langchain_runner(payloads, fmt)
        if fmt == 'openai-chat':
            cases['openai SDK ChatCompletionStreamState'] = openai_sdk_runner(payloads)
        else:
            cases['anthropic SDK accumulate_event'] = anthropic_sdk_runner(payloads)
    return cases


def test_streams_agree() -> None:
    for (fmt, shape), (body, payloads) in STREAMS.items():
        result = core_runner(rust.StreamAggregator, fmt, body)()
        assert result == core_runner(reference.StreamAggregator, fmt, body)()
        assert result['chunks'] == len(payloads), (fmt, shape)
        for call in result['tool_calls']:
            assert isinstance(json.loads(call['arguments']), dict)


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

    def partial_after_every_fragment() -> None:
        agg = rust.StreamAggregator('anthropic')
        agg.feed(
            b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}\n\n'
        )
        for f in fragments:
            agg.feed(
                b'data: '
                + orjson.dumps(
                    {
                        'type': 'content_block_delta',
                        'index': 0,
                        'delta': {'type': 'input_json_delta', 'partial_json': f},
                    }
                )
                + b'\n\n'
            )
            agg.partial_arguments(0)

    def feed_only() -> None:
        agg = rust.StreamAggregator('anthropic')
        agg.feed(
            b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}\n\n'
        )
        for f in fragments:
            agg.feed(
                b'data: '
                + orjson.dumps(
                    {
                        'type': 'content_block_delta',
                        'index': 0,
                        'delta': {'type': 'input_json_delta', 'partial_json': f},
                    }
                )
                + b'\n\n'
            )

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
            'toolweave rust: feed + partial_arguments each fragment': partial_after_every_fragment,
            'toolweave rust: feed only (no asks)': feed_only,
            'jiter re-parse of every prefix': lambda: [
                jiter.from_json(p.encode(), partial_mode='trailing-strings') for p in prefixes
            ],
        },
    }


def write_results(tables: dict[str, dict[str, float]]) -> None:
    RESULTS.mkdir(exist_ok=True)
    lines = [
        '# toolweave core benchmarks',
        '',
        'Same-run medians; ratio = time / floor (lower is faster; the floor is the first row of each group).',
        '',
        '| group | implementation | time | ratio to floor |',
        '|---|---|---:|---:|',
    ]
    for group, times in tables.items():
        floor = next(iter(times.values()))
        for name, t in times.items():
            shown = f'{t * 1e6:,.0f} us' if t >= 1e-4 else f'{t * 1e6:,.2f} us'
            lines.append(f'| {group} | {name} | {shown} | {t / floor:.2f}x |')
    (RESULTS / 'core.md').write_text('\n'.join(lines) + '\n')
    try:
        import matplotlib

        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:  # plotting is a bench-only dependency
        return
    groups = [g for g in tables if len(tables[g]) > 1]
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 2.2 * len(groups)))
    for ax, group in zip(axes, groups, strict=True):
        times = tables[group]
        floor = next(iter(times.values()))
        names = list(times)[1:]
        ratios = [times[n] / floor for n in names]
        colors = ['tab:green' if n.startswith('toolweave rust') else 'tab:gray' for n in names]
        ax.barh(names, ratios, color=colors)
        ax.axvline(1.0, color='black', lw=1)
        ax.axvline(0.5, color='tab:red', lw=1, ls='--')
        ax.set_xscale('log')
        ax.set_title(group, fontsize=9)
        ax.tick_params(labelsize=7)
    fig.supxlabel('time / floor (log scale; black line = floor, red dashed = 0.5x target)')
    fig.tight_layout()
    fig.savefig(RESULTS / 'core.png', dpi=110)


@pytest.mark.benchmark(group='core-report')
def test_write_results(capsys: pytest.CaptureFixture[str]) -> None:
    tables: dict[str, dict[str, float]] = {}
    for fmt, shape in STREAMS:
        body, payloads = STREAMS[(fmt, shape)]
        group = f'{fmt} {shape} ({len(payloads)} chunks, {len(body) // 1024} KB)'
        budget = 3.0 if shape == 'big' else 0.6
        tables[group] = {name: median_time(fn, budget) for name, fn in stream_cases(fmt, shape).items()}
    for group, cases in parse_cases().items():
        tables[group] = {name: median_time(fn, 0.4) for name, fn in cases.items()}
    asking = tables[ASKS]
    # The target: all asks together within 2x of one full parse (asks = feed + ask - feed only).
    asking[ASKS_ALONE] = (
        asking['toolweave rust: feed + partial_arguments each fragment'] - asking['toolweave rust: feed only (no asks)']
    )
    write_results(tables)
    with capsys.disabled():
        print('\n' + (RESULTS / 'core.md').read_text())
