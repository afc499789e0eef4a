"""parse_arguments (strict): Rust vs the pure-Python twin vs orjson.loads vs json.loads."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest
import toolweave._core as rust
import toolweave._reference as reference
from conftest import best_of

SMALL = '{"city": "San Francisco, CA", "unit": "celsius", "days": 5, "include": ["wind", "humidity"]}'
LARGE = json.dumps(
    {'rows': [{'id': i, 'name': f'row {i}', 'score': i / 3, 'tags': ['a', 'b'], 'ok': i % 2 == 0} for i in range(2000)]}
)
INPUTS = {'small': SMALL, 'large': LARGE}
PARSERS: dict[str, Callable[[str], Any]] = {
    'rust': rust.parse_arguments,
    'reference': reference.parse_arguments,
    'orjson.loads': orjson.loads,
    'json.loads': json.loads,
}


@pytest.mark.parametrize('size', list(INPUTS))
@pytest.mark.parametrize('impl', list(PARSERS))
def test_bench_parse_arguments(benchmark: Any, impl: str, size: str) -> None:
    benchmark.group = f'parse-arguments-{size}'
    text = INPUTS[size]
    assert benchmark(PARSERS[impl], text) == json.loads(text)


def test_parse_arguments_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    lines = []
    for size, text in INPUTS.items():
        number = 2000 if size == 'small' else 20
        t = {name: best_of(functools.partial(p, text), number=number) for name, p in PARSERS.items()}
        lines.append(
            f'[parse_arguments {size}, {len(text)} chars] '
            + ', '.join(f'{k}: {v * 1e6:.2f} us' for k, v in t.items())
            + f'\n  rust vs reference: {t["reference"] / t["rust"]:.2f}x, rust vs orjson.loads: '
            f'{t["orjson.loads"] / t["rust"]:.2f}x, rust vs json.loads: {t["json.loads"] / t["rust"]:.2f}x'
        )
    with capsys.disabled():
        print('\n' + '\n'.join(lines))
