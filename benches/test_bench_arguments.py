"""parse_arguments (strict, partial, lenient): Rust vs the pure-Python twin vs jiter.from_json vs orjson.loads.

Three documents (issue 14): a small CJK argument object (610 bytes), a 2 KB one and a 178 KB one.
Targets: strict and partial no slower than ``jiter.from_json`` on the same input (partial of a
truncated text against jiter's own partial mode, ``trailing-strings``); lenient on valid input equal
to strict. Every row of a document is measured in the same interleaved rounds; ``make bench`` prints
the Rust/pure ratio of each mode. Nothing here asserts a timing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import jiter
import orjson
import pytest
import toolweave._core as rust
import toolweave._reference as reference
from _streams import CJK_ARGS, partial_fragments
from conftest import interleaved

SMALL = '{"city": "San Francisco, CA", "unit": "celsius", "days": 5, "include": ["wind", "humidity"]}'
LARGE = json.dumps(
    {'rows': [{'id': i, 'name': f'row {i}', 'score': i / 3, 'tags': ['a', 'b'], 'ok': i % 2 == 0} for i in range(2000)]}
)
DOCUMENTS = {
    'small CJK': json.dumps(CJK_ARGS[0][1], ensure_ascii=False),
    '2 KB': ''.join(partial_fragments()),
    '178 KB': LARGE,
}
PARSERS: dict[str, Callable[[str], Any]] = {
    'rust': rust.parse_arguments,
    'reference': reference.parse_arguments,
    'orjson.loads': orjson.loads,
    'json.loads': json.loads,
}


def size_of(text: str) -> str:
    n = len(text.encode())
    return f'{n:,} B' if n < 10_000 else f'{n / 1000:,.0f} KB'


def parse_cases(text: str) -> dict[str, Callable[[], Any]]:
    """The rows of one document; the first is the floor (``orjson.loads`` of the whole text)."""
    raw = text.encode()
    cut = text[: len(text) * 2 // 3]
    return {
        'orjson.loads (floor)': functools.partial(orjson.loads, raw),
        'jiter.from_json': functools.partial(jiter.from_json, raw),
        # jiter takes bytes only: what a caller holding the model's argument text (a str) pays
        'jiter.from_json(text.encode())': lambda: jiter.from_json(text.encode()),
        'toolweave rust strict': functools.partial(rust.parse_arguments, text),
        'toolweave rust partial (whole text)': functools.partial(rust.parse_arguments, text, 'partial'),
        'toolweave rust lenient (valid text)': functools.partial(rust.parse_arguments, text, 'lenient'),
        'jiter.from_json trailing-strings (2/3 of the text)': functools.partial(
            jiter.from_json, cut.encode(), partial_mode='trailing-strings'
        ),
        'toolweave rust partial (2/3 of the text)': functools.partial(rust.parse_arguments, cut, 'partial'),
        'toolweave pure-Python twin strict': functools.partial(reference.parse_arguments, text),
        'toolweave pure-Python twin partial (2/3 of the text)': functools.partial(
            reference.parse_arguments, cut, 'partial'
        ),
        'toolweave pure-Python twin lenient (valid text)': functools.partial(
            reference.parse_arguments, text, 'lenient'
        ),
    }


def parse_tables(budget: float = 0.5) -> dict[str, dict[str, float]]:
    """One table per document, every row measured in the same run."""
    return {
        f'parse_arguments, {name} ({size_of(text)})': interleaved(parse_cases(text), budget=budget)
        for name, text in DOCUMENTS.items()
    }


def parse_summary(tables: dict[str, dict[str, float]]) -> list[str]:
    """The target ratios of each document, and the Rust/pure ratio of each mode."""
    lines = []
    for group, t in tables.items():
        jit, cut = t['jiter.from_json'], t['jiter.from_json trailing-strings (2/3 of the text)']
        lines.append(
            f'[{group}] strict / jiter.from_json: {t["toolweave rust strict"] / jit:.2f}x '
            f'(/ jiter.from_json(text.encode()): {t["toolweave rust strict"] / t["jiter.from_json(text.encode())"]:.2f}x); '
            f'partial (whole) / jiter.from_json: {t["toolweave rust partial (whole text)"] / jit:.2f}x; '
            f'partial (2/3) / jiter trailing-strings: {t["toolweave rust partial (2/3 of the text)"] / cut:.2f}x; '
            f'lenient / strict: {t["toolweave rust lenient (valid text)"] / t["toolweave rust strict"]:.2f}x; '
            f'Rust/pure: strict {t["toolweave rust strict"] / t["toolweave pure-Python twin strict"]:.3f}, '
            f'partial {t["toolweave rust partial (2/3 of the text)"] / t["toolweave pure-Python twin partial (2/3 of the text)"]:.3f}, '
            f'lenient {t["toolweave rust lenient (valid text)"] / t["toolweave pure-Python twin lenient (valid text)"]:.3f}'
        )
    return lines


@pytest.mark.parametrize('name', list(DOCUMENTS))
def test_every_row_gives_the_same_object(name: str) -> None:
    text = DOCUMENTS[name]
    results = {row: fn() for row, fn in parse_cases(text).items()}
    whole = [v for row, v in results.items() if '2/3' not in row]
    cut = [v for row, v in results.items() if '2/3' in row]
    assert all(v == whole[0] for v in whole) and whole[0]
    assert cut[1] == cut[2], 'Rust and twin partial agree'


@pytest.mark.parametrize('size', ['small', 'large'])
@pytest.mark.parametrize('impl', list(PARSERS))
def test_bench_parse_arguments(benchmark: Any, impl: str, size: str) -> None:
    benchmark.group = f'parse-arguments-{size}'
    text = SMALL if size == 'small' else LARGE
    assert benchmark(PARSERS[impl], text) == json.loads(text)


def test_parse_arguments_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    lines = parse_summary(parse_tables(budget=0.3))
    with capsys.disabled():
        print('\n' + '\n'.join(lines))
