"""Argument validation and schema generation.

* parse + validate ~0.5 KB and ~2 KB argument strings against a nested schema: the Rust
  ``SchemaValidator.validate_json`` vs ``orjson.loads`` alone vs ``orjson.loads`` + ``jsonschema_rs``
  vs pydantic ``validate_json`` (target: Rust at or below ``orjson.loads`` alone);
* schema generation of a 6-parameter function, cold and cached, vs pydantic
  ``TypeAdapter(...).json_schema()`` (target: cached <= 5 us).
"""

from __future__ import annotations

import enum
import functools
import json
from typing import Annotated, Any, Optional

import jsonschema_rs
import orjson
import pydantic
import pytest
import toolweave._core as rust
from conftest import best_of
from toolweave.tools import ToolParam
from toolweave.tools.schema import _function_schema, function_schema


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
