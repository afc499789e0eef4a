"""A ``Field(alias=...)`` on a function parameter: the schema, the one-step validator and the slow path agree.

pydantic ignores an alias on a function parameter (it warns ``UnsupportedFieldAttributeWarning``), so the
schema advertises the parameter's own name. The one-step validator (a TypedDict of the parameters) used to
honour the alias as a key: ``{"b": 2}`` passed where the schema says ``a`` and unknown keys are refused, while
``{"a": 2}`` passed only through the slow path. Now the parameter's name is the only key on every path.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Annotated

import pytest
from pydantic import AliasChoices, Field
from pydantic.warnings import UnsupportedFieldAttributeWarning
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback


@pytest.fixture
def aliased() -> Iterator[MethodToolCallback]:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UnsupportedFieldAttributeWarning)  # pydantic's note that the alias is moot

        def add(
            a: Annotated[int, Field(alias='b', ge=0)],
            c: Annotated[int, Field(validation_alias=AliasChoices('d', 'e'))] = 1,
        ) -> int:
            """Add two numbers."""
            return a + c

        callback = MethodToolCallback(add)
        assert callback.call('{"a": 2}') == '3'  # builds the one-step validator too
        yield callback


def test_the_schema_names_the_parameters(aliased: MethodToolCallback) -> None:
    schema = aliased.tool_definition.input_schema
    assert list(schema['properties']) == ['a', 'c'] and schema['required'] == ['a']
    assert schema['properties']['a'] == {'type': 'integer', 'minimum': 0}


@pytest.mark.parametrize(
    ('text', 'result'), [('{"a": 2}', '3'), ('{"a": "2", "c": 5}', '7'), ('{"a": 0, "c": "4"}', '4')]
)
def test_the_parameter_names_are_taken(aliased: MethodToolCallback, text: str, result: str) -> None:
    assert aliased.call(text) == result


@pytest.mark.parametrize(
    ('text', 'problem'),
    [
        ('{"b": 2}', "unexpected argument 'b'; a: missing required argument"),
        ('{"b": "2"}', "unexpected argument 'b'; a: missing required argument"),
        ('{"a": 1, "d": 5}', "unexpected argument 'd'"),
        ('{"a": 1, "e": 5}', "unexpected argument 'e'"),
        ('{"a": -1}', 'a: Input should be greater than or equal to 0'),  # the Field's other settings stay
    ],
)
def test_the_aliases_are_unknown_arguments(aliased: MethodToolCallback, text: str, problem: str) -> None:
    with pytest.raises(ToolExecutionError) as caught:
        aliased.call(text)
    assert str(caught.value) == f"Invalid arguments for tool 'add': {problem}"
