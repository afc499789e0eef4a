"""StreamAggregator: Rust vs the pure-Python twin vs the floor of orjson.loads on every chunk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
import toolweave._core as rust
import toolweave._reference as reference
from conftest import best_of, openai_tool_stream

BODY, PAYLOADS = openai_tool_stream()
READ = 4096  # feed in HTTP-read-sized pieces, as a client does
PIECES = [BODY[i : i + READ] for i in range(0, len(BODY), READ)]


def aggregate(cls: Any) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        agg = cls()
        for piece in PIECES:
            agg.feed(piece)
        agg.finish()
        return agg.result()  # type: ignore[no-any-return]

    return run


def orjson_per_chunk() -> list[Any]:
    return [orjson.loads(p) for p in PAYLOADS]


CASES = {
    'rust': aggregate(rust.StreamAggregator),
    'reference': aggregate(reference.StreamAggregator),
    'orjson.loads-per-chunk': orjson_per_chunk,
}


def test_stream_is_realistic() -> None:
    result = CASES['rust']()
    assert result == CASES['reference']()
    assert len(PAYLOADS) == result['chunks']
    assert 590 <= len(PAYLOADS) <= 610
    assert [c['name'] for c in result['tool_calls']] == ['get_weather', 'search_flights', 'create_event']
    assert all(isinstance(orjson.loads(c['arguments']), dict) for c in result['tool_calls'])


@pytest.mark.benchmark(group='stream-openai-600-chunks')
@pytest.mark.parametrize('impl', list(CASES))
def test_bench_stream(benchmark: Any, impl: str) -> None:
    benchmark(CASES[impl])


def test_stream_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    times = {name: best_of(fn, number=10) for name, fn in CASES.items()}
    with capsys.disabled():
        print(
            f'\n[stream {len(PAYLOADS)} chunks, {len(BODY)} bytes] '
            + ', '.join(f'{k}: {v * 1e6:.0f} us' for k, v in times.items())
            + f'\nrust vs reference: {times["reference"] / times["rust"]:.1f}x, '
            f'rust vs orjson.loads-per-chunk: {times["orjson.loads-per-chunk"] / times["rust"]:.2f}x'
        )
