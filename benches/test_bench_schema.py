"""Argument binding per tool call, argument validation and schema generation; writes the arguments section of
benches/results/core.md (and core_arguments.png).

* per tool call, parse + validate + coerce of ~0.5 KB and ~2 KB argument objects on the path a user
  runs (``MethodToolCallback.call`` / ``FunctionToolCallback.call`` of a tool that returns at once),
  valid and invalid, against one ``orjson.loads`` of the same text (targets: valid at most 1.5x,
  invalid at most 5x), for tools over pydantic models, over TypedDicts and over a raw JSON Schema;
* parse + validate with the Rust ``SchemaValidator.validate_json`` vs ``orjson.loads`` +
  ``jsonschema_rs`` vs pydantic ``validate_json``;
* schema generation of a 6-parameter function, cold (first ``@tool``) and cached, vs pydantic
  ``TypeAdapter(fn).json_schema()`` cold (targets: cold no slower; cached under 5 us); the one-step
  validator is built by the tool's first call, shown in its own rows.

Rows of a group are measured in the same interleaved rounds; "pure" rows run the same path with the
pure-Python twins in place of the Rust core (as ``TOOLWEAVE_PURE=1`` would). No timing is asserted.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional
from unittest import mock

import jsonschema_rs
import orjson
import pydantic
import pytest
import toolweave._core as rust
import toolweave._reference as reference
import toolweave.tools.function as function_module
import toolweave.tools.method as method_module
from conftest import best_of, interleaved
from test_bench_arguments import parse_summary, parse_tables
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import FunctionToolCallback, MethodToolCallback, ToolParam
from toolweave.tools.schema import _function_schema, function_schema
from typing_extensions import TypedDict

RESULTS = Path(__file__).parent / 'results'
START, END = '<!-- arguments: start -->', '<!-- arguments: end -->'


class Tag(str, enum.Enum):
    A = 'alpha'
    B = 'beta'
    C = 'gamma'


class Address(pydantic.BaseModel):
    street: str
    city: str
    zip_code: Optional[str] = None


class Item(pydantic.BaseModel):
    sku: str
    quantity: int
    price: float
    tags: list[Tag] = []


class Order(pydantic.BaseModel):
    customer: str
    shipping: Address
    items: list[Item]
    note: Optional[str] = None


def place_order(order: Order) -> str:
    return ''


SCHEMA = function_schema(place_order).input_schema
ORDER_ADAPTER: pydantic.TypeAdapter[Any] = function_schema(place_order).arguments  # type: ignore[assignment]


def _arguments(n_items: int) -> str:
    items = [
        {'sku': f'SKU-{i:05d}', 'quantity': i % 7 + 1, 'price': 9.99 + i, 'tags': ['alpha', 'gamma']}
        for i in range(n_items)
    ]
    order = {
        'customer': 'Ada Lovelace',
        'shipping': {'street': '12 Analytical Engine Road', 'city': 'London', 'zip_code': 'NW1 6XE'},
        'items': items,
        'note': 'Leave the parcel with the concierge, please.',
    }
    return json.dumps({'order': order})


INPUTS = {'0.5KB': _arguments(4), '2KB': _arguments(22)}
RUST = rust.SchemaValidator(SCHEMA)
JSONSCHEMA_RS = jsonschema_rs.validator_for(SCHEMA)


def _orjson_jsonschema_rs(text: str) -> Any:
    value = orjson.loads(text)
    JSONSCHEMA_RS.validate(value)
    return value


VALIDATORS = {
    'rust validate_json': RUST.validate_json,
    'orjson.loads alone': orjson.loads,
    'orjson.loads + jsonschema_rs': _orjson_jsonschema_rs,
    'pydantic validate_json': ORDER_ADAPTER.validate_json,
}


@pytest.mark.parametrize('size', list(INPUTS))
@pytest.mark.parametrize('impl', list(VALIDATORS))
def test_bench_validate(benchmark: Any, impl: str, size: str) -> None:
    benchmark.group = f'validate-{size}'
    text = INPUTS[size]
    assert 400 <= len(INPUTS['0.5KB']) <= 700 and 1800 <= len(INPUTS['2KB']) <= 2400
    result = benchmark(VALIDATORS[impl], text)
    assert result is not None


class Model6(pydantic.BaseModel):
    city: Annotated[str, pydantic.Field(description='City name')]
    days: Annotated[int, pydantic.Field(description='Number of days')] = 3
    unit: Optional[str] = None
    tags: list[Tag]
    address: Address
    note: Annotated[str, pydantic.Field(description='Free text')] = ''


def six(
    city: Annotated[str, ToolParam(description='City name')],
    tags: list[Tag],
    address: Address,
    days: Annotated[int, ToolParam(description='Number of days')] = 3,
    unit: Optional[str] = None,
    note: Annotated[str, pydantic.Field(description='Free text')] = '',
) -> str:
    return ''


GENERATORS = {
    'toolweave cached': functools.partial(function_schema, six),
    'toolweave cold': functools.partial(_function_schema.__wrapped__, six, frozenset()),
    'toolweave cold, then the validator its first call builds': lambda: (
        _function_schema.__wrapped__(six, frozenset()).arguments
    ),
    'pydantic TypeAdapter(fn).json_schema() cold': lambda: pydantic.TypeAdapter(six).json_schema(),
    'pydantic TypeAdapter(...).json_schema()': lambda: pydantic.TypeAdapter(Model6).json_schema(),
    'pydantic json_schema() on a kept adapter': functools.partial(pydantic.TypeAdapter(Model6).json_schema),
}


@pytest.mark.parametrize('impl', list(GENERATORS))
def test_bench_schema_generation(benchmark: Any, impl: str) -> None:
    benchmark.group = 'schema-generation'
    assert benchmark(GENERATORS[impl])


def test_validate_and_schema_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    lines = []
    for size, text in INPUTS.items():
        t = {name: best_of(functools.partial(fn, text), number=2000) for name, fn in VALIDATORS.items()}
        base = t['orjson.loads alone']
        lines.append(
            f'[parse+validate {size}, {len(text)} chars] '
            + ', '.join(f'{k}: {v * 1e6:.2f} us ({v / base:.2f}x orjson.loads)' for k, v in t.items())
        )
    g = {
        name: best_of(fn, number=50 if 'cold' in name or 'TypeAdapter(' in name else 5000)
        for name, fn in GENERATORS.items()
    }
    lines.append(
        '[schema generation, 6 parameters] '
        + ', '.join(f'{k}: {v * 1e6:.2f} us' for k, v in g.items())
        + f'\n  cached vs pydantic TypeAdapter(...).json_schema(): '
        f'{g["pydantic TypeAdapter(...).json_schema()"] / g["toolweave cached"]:.0f}x faster; '
        f'cold vs pydantic: {g["toolweave cold"] / g["pydantic TypeAdapter(...).json_schema()"]:.2f}x the time'
    )
    with capsys.disabled():
        print('\n' + '\n'.join(lines))


class ItemDict(TypedDict):
    sku: str
    quantity: int
    price: float
    tags: list[Tag]


class AddressDict(TypedDict):
    street: str
    city: str
    zip_code: Optional[str]


class OrderDict(TypedDict):
    customer: str
    shipping: AddressDict
    items: list[ItemDict]
    note: Optional[str]


def place_order_dicts(order: OrderDict) -> str:
    return 'ok'


def place_order_models(order: Order) -> str:
    return 'ok'


def _accept(arguments: Any) -> str:
    return 'ok'


def _tools() -> dict[str, Any]:
    """One tool per shape, built with whatever core is in place (Rust, or the twins under ``pure_core``)."""
    return {
        'MethodToolCallback, pydantic models': MethodToolCallback(place_order_models),
        'MethodToolCallback, TypedDicts': MethodToolCallback(place_order_dicts),
        'FunctionToolCallback, raw JSON Schema': FunctionToolCallback.builder('place_order', _accept)
        .input_schema(SCHEMA)
        .build(),
    }


@contextmanager
def pure_core() -> Iterator[None]:
    """The tool modules' core functions replaced by the pure-Python twins (what ``TOOLWEAVE_PURE=1`` selects)."""
    with (
        mock.patch.object(method_module, 'parse_arguments', reference.parse_arguments),
        mock.patch.object(method_module, '_DECODER', None),  # TOOLWEAVE_PURE=1: pydantic's step (no decoder)
        mock.patch.object(function_module, 'parse_arguments', reference.parse_arguments),
        mock.patch.object(function_module, 'SchemaValidator', reference.SchemaValidator),
    ):
        yield


def _invalid(text: str) -> str:
    """``text`` with the first item's quantity a word: one invalid field deep inside."""
    bad = text.replace('"quantity": 1', '"quantity": "one"', 1)
    assert bad != text
    return bad


def _call_invalid(tool: Any, text: str) -> None:
    try:
        tool.call(text)
    except ToolExecutionError:
        return
    raise AssertionError('the invalid call was accepted')


def _left_out(text: str) -> str:
    """``text`` with the first item's price left out (a required field a model forgets)."""
    bad = text.replace(', "price": 9.99', '', 1)
    assert bad != text
    return bad


def _wrong_type(text: str) -> str:
    """``text`` with the first item's tags a string where a list goes (a JSON type the field never takes)."""
    bad = text.replace('"tags": ["alpha", "gamma"]', '"tags": "alpha"', 1)
    assert bad != text
    return bad


def binding_cases(tools: dict[str, Any], text: str) -> dict[str, Callable[[], Any]]:
    """The floor, then per tool: a valid call and three invalid ones (a word for an int, a field left out, a wrong
    JSON type: what models most often send wrong)."""
    cases: dict[str, Callable[[], Any]] = {'orjson.loads (floor)': functools.partial(orjson.loads, text)}
    for name, tool in tools.items():
        cases[f'{name}: valid call'] = functools.partial(tool.call, text)
        cases[f'{name}: invalid call'] = functools.partial(_call_invalid, tool, _invalid(text))
        cases[f'{name}: invalid call, field left out'] = functools.partial(_call_invalid, tool, _left_out(text))
        cases[f'{name}: invalid call, wrong JSON type'] = functools.partial(_call_invalid, tool, _wrong_type(text))
    return cases


def test_binding_cases_run() -> None:
    for text in INPUTS.values():
        for name, fn in binding_cases(_tools(), text).items():
            result = fn()
            assert result == 'ok' or 'invalid call' in name or name.startswith('orjson'), name
    with pure_core():
        for name, fn in binding_cases(_tools(), INPUTS['0.5KB']).items():
            assert fn() == 'ok' or 'invalid call' in name or name.startswith('orjson'), name


def binding_tables(budget: float = 0.5) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Per input size: the rows with the Rust core, and the same rows with the twins (measured right after)."""
    rust_tables, pure_tables = {}, {}
    for size, text in INPUTS.items():
        group = f'tool call: parse + validate + coerce, {size} ({len(text):,} chars)'
        rust_tables[group] = interleaved(binding_cases(_tools(), text), budget=budget)
        with pure_core():
            pure_tables[group] = interleaved(binding_cases(_tools(), text), budget=budget)
    return rust_tables, pure_tables


def validation_table(budget: float = 0.5) -> dict[str, dict[str, float]]:
    tables = {}
    for size, text in INPUTS.items():
        cases = {name: functools.partial(fn, text) for name, fn in VALIDATORS.items()}
        cases = {'orjson.loads alone (floor)': cases.pop('orjson.loads alone'), **cases}
        cases['toolweave pure-Python twin validate_json'] = functools.partial(
            reference.SchemaValidator(SCHEMA).validate_json, text
        )
        tables[f'parse + validate, {size} ({len(text):,} chars)'] = interleaved(cases, budget=budget)
    return tables


def schema_table() -> dict[str, dict[str, float]]:
    order = ['pydantic TypeAdapter(fn).json_schema() cold', 'toolweave cold', 'toolweave cached']
    order += [name for name in GENERATORS if name not in order]
    return {'schema of a 6-parameter function': interleaved({name: GENERATORS[name] for name in order}, budget=2.0)}


def _shown(seconds: float) -> str:
    return f'{seconds * 1e6:,.0f} us' if seconds >= 1e-4 else f'{seconds * 1e6:,.2f} us'


def _rows(
    tables: dict[str, dict[str, float]], pure: dict[str, dict[str, float]]
) -> list[tuple[str, str, float, float, float | None]]:
    """``(group, row, seconds, ratio to the group's floor, Rust/pure ratio or None)``."""
    rows = []
    for group, times in tables.items():
        floor = next(iter(times.values()))
        for name, t in times.items():
            twin = pure.get(group, {}).get(name) if 'pure' not in name else None
            rows.append(
                (group, name, t, t / floor, t / twin if twin and name.startswith(('Method', 'Function')) else None)
            )
    return rows


TWIN_OF = {
    'toolweave rust strict': 'toolweave pure-Python twin strict',
    'toolweave rust partial (2/3 of the text)': 'toolweave pure-Python twin partial (2/3 of the text)',
    'toolweave rust lenient (valid text)': 'toolweave pure-Python twin lenient (valid text)',
    'rust validate_json': 'toolweave pure-Python twin validate_json',
}
"""Parse and validate rows with the Rust core -> the same row with the twin."""


def _twin_column(tables: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Rust/pure of the parse and validate rows (:data:`TWIN_OF`)."""
    return {
        group: {name: times[name] / times[twin] for name, twin in TWIN_OF.items() if name in times and twin in times}
        for group, times in tables.items()
    }


def write_section(
    rows: list[tuple[str, str, float, float, float | None]], summary: list[str], conditions: Sequence[str] = ()
) -> list[str]:
    """Put the arguments section into benches/results/core.md (replacing an older one) and draw its chart.

    ``conditions``: lines saying under what load the run was. Returns the section's lines (what
    ``make bench`` prints: every row with its Rust/pure ratio).
    """
    lines = [
        START,
        '## Arguments: parsing, binding per tool call, validation, schema',
        '',
        'Written by benches/test_bench_schema.py (`make bench`), one run: same-run medians of interleaved rounds;',
        'ratio = time / the first row of the group. Rust/pure = the row with the Rust core / the same row',
        'with the pure-Python twins (`TOOLWEAVE_PURE=1`).',
        *conditions,
        '',
        '| group | implementation | time | ratio to floor | Rust/pure |',
        '|---|---|---:|---:|---:|',
    ]
    for group, name, t, ratio, twin in rows:
        lines.append(f'| {group} | {name} | {_shown(t)} | {ratio:.2f}x | {"" if twin is None else f"{twin:.3f}"} |')
    lines += [
        '',
        'Targets, from the same run:',
        '',
        *[f'- {line}' for line in summary],
        '',
        '![](core_arguments.png)',
        END,
    ]
    path = RESULTS / 'core.md'
    text = path.read_text() if path.exists() else '# toolweave core benchmarks\n'
    if START in text and END in text:
        text = text[: text.index(START)] + text[text.index(END) + len(END) :].lstrip('\n')
    path.write_text(text.rstrip('\n') + '\n\n' + '\n'.join(lines) + '\n')
    _chart(rows)
    return lines


def _chart(rows: list[tuple[str, str, float, float, float | None]]) -> None:
    try:
        import matplotlib

        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:  # plotting is a bench-only dependency
        return
    groups: dict[str, list[tuple[str, float]]] = {}
    for group, name, _, ratio, _ in rows:
        groups.setdefault(group, []).append((name, ratio))
    heights = [len(v) for v in groups.values()]
    fig, axes = plt.subplots(
        len(groups), 1, figsize=(13, 0.3 * sum(heights) + 0.8 * len(groups) + 1), gridspec_kw={'height_ratios': heights}
    )
    for ax, (group, bars) in zip(axes, groups.items(), strict=True):
        names = [n for n, _ in bars][::-1]
        ratios = [r for _, r in bars][::-1]
        colors = [
            'tab:green' if n.startswith(('toolweave', 'Method', 'Function', 'rust')) else 'tab:gray' for n in names
        ]
        ax.barh(range(len(names)), ratios, color=colors)
        ax.set_yticks(range(len(names)), names, fontsize=7.5)
        for y, r in enumerate(ratios):
            ax.text(r, y, f' {r:.2f}x', va='center', fontsize=7)
        ax.axvline(1.0, color='black', lw=1)
        ax.set_xscale('log')
        ax.set_title(group, fontsize=9, loc='left')
    fig.supxlabel('time / first row of the group (log scale; green = toolweave)', fontsize=9)
    fig.tight_layout()
    fig.savefig(RESULTS / 'core_arguments.png', dpi=90)


def binding_summary(tables: dict[str, dict[str, float]]) -> list[str]:
    lines = []
    for group, t in tables.items():
        floor = t['orjson.loads (floor)']
        parts = [f'{name}: {v / floor:.2f}x' for name, v in t.items() if name != 'orjson.loads (floor)']
        lines.append(f'[{group}] vs one orjson.loads: ' + '; '.join(parts))
    return lines


@pytest.mark.benchmark(group='arguments-report')
def test_write_arguments_results(capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from test_bench_import import conditions

    load = os.getloadavg()[0]
    parse = parse_tables()
    binding, binding_pure = binding_tables()
    validation = validation_table()
    schema = schema_table()
    g = schema['schema of a 6-parameter function']
    summary = parse_summary(parse) + binding_summary(binding)
    summary.append(
        f'[schema, 6 parameters] cold / pydantic TypeAdapter(fn).json_schema() cold: '
        f'{g["toolweave cold"] / g["pydantic TypeAdapter(fn).json_schema() cold"]:.2f}x; '
        f'cached: {g["toolweave cached"] * 1e6:.2f} us'
    )
    tables = {**parse, **binding, **validation, **schema}
    twins = _twin_column({**parse, **validation})
    rows = []
    for group, name, t, ratio, twin in _rows(tables, binding_pure):
        rows.append((group, name, t, ratio, twins.get(group, {}).get(name, twin)))
    lines = write_section(rows, summary, conditions(load))
    with capsys.disabled():
        print('\n' + '\n'.join(lines[1:-1]))


COLD_ROUNDS = 20
COLD_SCRIPT = """
import enum, gc, time
from typing import Annotated, Optional
import pydantic
from toolweave.tools import ToolParam
{imports}

class Tag(str, enum.Enum):
    A = 'alpha'
    B = 'beta'
    C = 'gamma'

class Address(pydantic.BaseModel):
    street: str
    city: str
    zip_code: Optional[str] = None

def six(
    city: Annotated[str, ToolParam(description='City name')],
    tags: list[Tag],
    address: Address,
    days: Annotated[int, ToolParam(description='Number of days')] = 3,
    unit: Optional[str] = None,
    note: Annotated[str, pydantic.Field(description='Free text')] = '',
) -> str:
    return ''

CALL = '{{"city": "Oslo", "tags": ["alpha"], "address": {{"street": "Main", "city": "Oslo"}}, "days": 4}}'
gc.collect()
gc.disable()  # a collection falling due during the statement would depend on what the process imported
start = time.process_time()
{statement}
print(time.process_time() - start)
"""
COLD_CASES = {
    'pydantic TypeAdapter(fn).json_schema(), first in a fresh interpreter': (
        'from pydantic import TypeAdapter\nimport toolweave.tools.schema',  # the same modules loaded as the next row
        'TypeAdapter(six).json_schema()',
    ),
    'toolweave first @tool, fresh interpreter (toolweave.tools.schema imported before)': (
        'from toolweave import tool\nimport toolweave.tools.schema',
        'tool(six)',
    ),
    'toolweave first @tool, fresh interpreter, with the modules it imports': (
        'from toolweave import tool',
        'tool(six)',
    ),
    'toolweave @tool of a second function, fresh interpreter (a 1-parameter @tool before)': (
        'from toolweave import tool\n\n@tool\ndef first(a: int) -> int:\n    return a\n',
        'tool(six)',
    ),
    'toolweave first @tool and its first call (the validator is built by the call), fresh interpreter': (
        'from toolweave import tool\nfrom toolweave.tools import MethodToolCallback\nimport toolweave.tools.schema',
        'tool(six)\nMethodToolCallback(six).call(CALL)',
    ),
}
"""The same 6-parameter function as :func:`six`, its schema made first thing in a new interpreter (garbage collector off)."""
SCHEMA_START, SCHEMA_END = '<!-- schema: start -->', '<!-- schema: end -->'


def cold_table() -> dict[str, tuple[float, float]]:
    """Per case: best and median CPU seconds of the timed statement over ``COLD_ROUNDS`` interleaved fresh interpreters.

    The interpreters write and then use bytecode; with ``TOOLWEAVE_BENCH_BASELINE`` set, the toolweave
    cases run against that package too (see benches/test_bench_import.py).
    """
    import os
    import statistics
    import subprocess
    import sys

    from test_bench_import import BASELINE, CHILD_ENV

    rows = {name: (case, CHILD_ENV) for name, case in COLD_CASES.items()}
    if BASELINE:
        env = {**CHILD_ENV, 'PYTHONPATH': os.pathsep.join(filter(None, [BASELINE, os.environ.get('PYTHONPATH')]))}
        rows.update({f'{name} (baseline)': (case, env) for name, case in COLD_CASES.items() if 'toolweave' in name})
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(COLD_ROUNDS):
        for name, ((imports, statement), env) in rows.items():
            code = COLD_SCRIPT.format(imports=imports, statement=statement)
            done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=env)
            times[name].append(float(done.stdout))
    return {name: (min(t), statistics.median(t)) for name, t in times.items()}


def test_cold_schema(capsys: pytest.CaptureFixture[str]) -> None:
    """Cold schema target (issue #14): the first ``@tool`` no slower than pydantic's ``TypeAdapter`` cold; cached < 5 us."""
    import os
    import sys

    from test_bench_import import bar_chart, conditions, replace_section

    load = os.getloadavg()[0]
    cold = cold_table()
    warm = schema_table()['schema of a 6-parameter function']
    floor_best, floor_median = cold['pydantic TypeAdapter(fn).json_schema(), first in a fresh interpreter']
    lines = [
        '| case | best CPU | median CPU | best / TypeAdapter best | median / TypeAdapter median |',
        '|---|---:|---:|---:|---:|',
    ]
    for name, (best, median) in cold.items():
        lines.append(
            f'| {name} | {_shown(best)} | {_shown(median)} | {best / floor_best:.2f}x | {median / floor_median:.2f}x |'
        )
    ta = warm['pydantic TypeAdapter(fn).json_schema() cold']
    warm_lines = ['| in one process (interleaved, median CPU) | time | ratio to TypeAdapter(fn) |', '|---|---:|---:|']
    warm_lines += [f'| {name} | {_shown(t)} | {t / ta:.2f}x |' for name, t in warm.items()]
    with capsys.disabled():
        print('\n' + '\n'.join(lines) + '\n\n' + '\n'.join(warm_lines))
    if any('benchmark-enable' in a for a in sys.argv):
        replace_section(
            SCHEMA_START,
            SCHEMA_END,
            [
                '## Cold schema of a 6-parameter function',
                '',
                'One run of benches/test_bench_schema.py::test_cold_schema. Target: the first `@tool` no slower than',
                "pydantic's `TypeAdapter(fn).json_schema()` cold; cached under 5 us. Fresh interpreters: the CPU time",
                f'of the one statement, {COLD_ROUNDS} interleaved rounds (pydantic and the function defined before).',
                *conditions(load),
                '',
                *lines,
                '',
                '"toolweave cold" below is the uncached generation in a warm process (`_function_schema` without its',
                "cache); pydantic's row builds a new `TypeAdapter` each time.",
                '',
                *warm_lines,
                '',
                bar_chart(
                    'import_schema.png',
                    {name: median / floor_median for name, (_, median) in cold.items()},
                    'median CPU / pydantic TypeAdapter(fn).json_schema() cold (fresh interpreters)',
                    line=1.0,
                ),
            ],
        )
