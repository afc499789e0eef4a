"""Snapshots of the input schemas of a dozen representative functions, and the corpus schema cases.

Regenerate a snapshot with ``TOOLWEAVE_UPDATE_SNAPSHOTS=1`` and review the diff before committing.
"""

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.core_fixtures import load_case
from support.schema_functions import SNAPSHOT_FUNCTIONS, charts, f_union, register, search
from toolweave._native import to_dialect
from toolweave.tools import MethodToolCallback
from toolweave.tools.schema import SCHEMA_DIALECT, function_schema

SCHEMAS = Path(__file__).parents[1] / 'data' / 'schemas'


@pytest.mark.parametrize('func', SNAPSHOT_FUNCTIONS, ids=lambda f: f.__name__)
def test_snapshot(func):
    schema = function_schema(func).input_schema
    path = SCHEMAS / f'{func.__name__}.json'
    if os.environ.get('TOOLWEAVE_UPDATE_SNAPSHOTS') == '1':
        path.write_text(json.dumps(schema, indent=1, ensure_ascii=False) + '\n')
    assert schema == json.loads(path.read_text())
    # key order is part of the contract (declaration order)
    assert list(schema['properties']) == list(json.loads(path.read_text())['properties'])
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize('func', SNAPSHOT_FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize('dialect', ['openai-strict', 'gemini', 'anthropic'])
def test_snapshot_dialects_are_valid_json_schema(func, dialect):
    out = to_dialect(function_schema(func).input_schema, dialect)
    jsonschema.Draft202012Validator.check_schema(out)
    if dialect == 'gemini':
        assert '$ref' not in json.dumps(out)
        assert '$defs' not in out
    if dialect == 'openai-strict':
        _assert_openai_strict(out)


def _objects(node: Any):
    if isinstance(node, dict):
        if 'properties' in node:
            yield node
        for key, value in node.items():
            if key not in ('enum', 'const', 'default'):
                yield from _objects(value)
    elif isinstance(node, list):
        for item in node:
            yield from _objects(item)


def _assert_openai_strict(schema: dict[str, Any]) -> None:
    text = json.dumps(schema)
    assert '"oneOf"' not in text and '"discriminator"' not in text
    for obj in _objects(schema):
        assert obj['additionalProperties'] is False
        assert obj['required'] == list(obj['properties'])


def test_case_b13_optional_not_required_and_strict_nullable():
    case = load_case('B13')
    schema = function_schema(search).input_schema
    non_strict = case['expected']['non-strict']
    assert schema['required'] == non_strict['required']
    assert schema['additionalProperties'] is non_strict['additionalProperties']
    assert schema['properties']['limit'] == {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}
    strict = to_dialect(schema, 'openai-strict')
    assert strict == {**case['expected']['strict']}  # no $schema in strict output


def test_case_b15_discriminated_union_strict_any_of():
    load_case('B15')
    strict = to_dialect(function_schema(register).input_schema, 'openai-strict')
    v = strict['properties']['v']
    assert 'oneOf' not in v and 'discriminator' not in v
    assert len(v['anyOf']) == 2
    for branch in v['anyOf']:
        target = strict['$defs'][branch['$ref'].rsplit('/', 1)[1]]
        assert target['additionalProperties'] is False
        assert target['required'] == list(target['properties'])


def test_case_b17_optional_with_default_not_required():
    case = load_case('B17')
    assert function_schema(charts).input_schema['required'] == case['expected']['required']


def test_case_b18_union_branches_closed_and_all_required():
    load_case('B18')
    schema = function_schema(f_union).input_schema
    strict = to_dialect(schema, 'openai-strict')
    for out in (schema, strict):
        branches = out['properties']['arg']['anyOf']
        assert [b['$ref'] for b in branches] == ['#/$defs/A', '#/$defs/B']  # Union[A, B]: one branch per member
        for branch in branches:
            target = out['$defs'][branch['$ref'].rsplit('/', 1)[1]]
            assert target['additionalProperties'] is False
            assert target['required'] == list(target['properties'])


def test_case_b20_non_strict_default_or_strict_consistent():
    load_case('B20')

    def weather(city: str, unit: str | None = None) -> str:
        return city

    definition = MethodToolCallback(weather).tool_definition
    # The default (non-strict) schema leaves the optional parameter out of required ...
    assert definition.input_schema['required'] == ['city']
    # ... and the strict dialect lists everything, the optional one nullable.
    strict = to_dialect(definition.input_schema, 'openai-strict')
    assert strict['required'] == ['city', 'unit']
    assert strict['properties']['unit'] == {'anyOf': [{'type': 'string'}, {'type': 'null'}]}
    assert strict['additionalProperties'] is False


def test_root_shape_of_every_snapshot():
    for func in SNAPSHOT_FUNCTIONS:
        schema = function_schema(func).input_schema
        assert list(schema)[:2] == ['$schema', 'type'] and schema['$schema'] == SCHEMA_DIALECT
        assert 'required' in schema and schema['additionalProperties'] is False


def test_docstring_styles_numpy_and_sphinx():
    def numpy_style(city: str, days: int = 1) -> str:
        """Forecast.

        Parameters
        ----------
        city : str
            The city.
        days : int
            How many days.
        """
        return city

    def sphinx_style(city: str, days: int = 1) -> str:
        """Forecast.

        :param city: The city.
        :param days: How many days.
        """
        return city

    for func in (numpy_style, sphinx_style):
        fs = function_schema(func)
        props = fs.input_schema['properties']
        assert (props['city']['description'], props['days']['description']) == ('The city.', 'How many days.')
        assert fs.summary == 'Forecast.'


def test_upper_case_option_and_cache_per_option():
    from toolweave.tools.schema import SchemaOption

    upper = function_schema(search, [SchemaOption.UPPER_CASE_TYPE_VALUES])
    assert upper.input_schema['type'] == 'OBJECT'
    assert upper.input_schema['properties']['limit'] == {'anyOf': [{'type': 'INTEGER'}, {'type': 'NULL'}]}
    assert function_schema(search).input_schema['type'] == 'object'
    assert function_schema(search, [SchemaOption.UPPER_CASE_TYPE_VALUES]) is upper
