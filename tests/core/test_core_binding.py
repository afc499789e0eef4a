"""The one-step argument binding of tools equals the slow path that lists every problem.

``MethodToolCallback`` validates the argument text in one pydantic step with numbers bounded in
the schema (``FunctionSchema.checked_arguments``) and, when that fails, reads the problems from its
error when it can. The slow path (``parse_arguments`` + per-parameter validation + the number walk)
is the specification: for any text the two give the same values or the same error message.
``FunctionToolCallback`` over an input type does the same with its own decoder; over a raw JSON
Schema it validates with ``validate_json(int64=True)`` instead of walking the value afterwards.
The input schema of a function, generated once for all parameters, equals the per-parameter one.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from typing import Any, Literal
from unittest import mock

import pydantic
import pytest
import toolweave.tools.schema as schema_module
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.binding import slow_path
from support.schema_functions import SNAPSHOT_FUNCTIONS
from toolweave._native import SchemaValidator, parse_arguments
from toolweave.exceptions import (
    InvalidToolArgumentsError,
    SchemaValidationError,
    ToolArgumentsError,
    ToolExecutionError,
)
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from toolweave.tools._numbers import (
    bounded_integers,
    checked_validator,
    number_problems,
    schema_problems,
    written_failures,
)
from toolweave.tools.function import _pointer
from toolweave.tools.schema import SchemaOption, function_schema
from typing_extensions import TypedDict


class Size(str, enum.Enum):
    S = 's'
    M = 'm'


class Point(pydantic.BaseModel):
    x: int
    y: float
    note: str | None
    label: str = ''


class PointDict(TypedDict):
    x: int
    y: float
    note: str | None


class Label(pydantic.BaseModel):
    """A model without numbers: its prebuilt validator needs no bound, the checked path keeps it."""

    text: str
    tags: list[str] = []


@dataclasses.dataclass
class Box:
    w: int
    h: int = 1


def shapes(
    a: int,
    b: float,
    c: str,
    d: list[int],
    e: Size,
    p: PointDict,
    label: Label | None = None,
    q: Box | None = None,
    r: dict[str, float] | None = None,
    when: datetime.date | None = None,
    lit: Literal['x', 'y'] = 'x',
    *,
    k: bool = False,
    t: tuple[int, str] = (1, 'a'),
) -> str:
    return ''


NAMES = ['a', 'b', 'c', 'd', 'e', 'p', 'q', 'r', 'when', 'lit', 'k', 't', 'label', 'extra']
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 1e20, 1.5, 1e308]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(['', 'x', 's', 'm', '12', '1.5', 'nan', 'inf', '1e400', '99999999999999999999', '2024-02-30']),
    st.sampled_from(['2024-01-31', 'true', 'y']),
    st.text(max_size=4),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(['x', 'y', 'note', 'w', 'h', 'z']), inner, max_size=4)
    ),
    max_leaves=8,
)
GOOD = {
    'a': 3,
    'b': 2.5,
    'c': 'text',
    'd': [1, 2],
    'e': 's',
    'p': {'x': 1, 'y': 2.0, 'note': None},
    'q': {'w': 2},
    'r': {'k': 1.0},
    'when': '2024-01-31',
    'lit': 'y',
    'k': True,
    't': [2, 'b'],
    'label': {'text': 'x'},
}
ARGUMENTS = st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=8).flatmap(
    lambda drawn: st.sets(st.sampled_from(list(GOOD)), max_size=len(GOOD)).map(
        lambda good: {**{name: GOOD[name] for name in good}, **drawn}
    )
)


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return 'ok', run()
    except ToolExecutionError as exc:
        return 'error', str(exc)


CALLBACK = MethodToolCallback(shapes)


def with_model(p: Point, n: int = 0) -> str:
    return ''


MODEL_CALLBACK = MethodToolCallback(with_model)


def test_the_fast_path_is_the_checked_one() -> None:
    """The signature above has a bounded validator: the differential test below exercises it."""
    assert function_schema(shapes).checked_arguments is not None
    assert CALLBACK._validate_fast(json.dumps(GOOD)) == CALLBACK._validate(GOOD)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ARGUMENTS)
@example({'a': None, 'q': {'x': None, 'w': False}})  # a dataclass refuses an unexpected keyword from JSON only
def test_one_step_binding_equals_the_slow_path(arguments: dict[str, Any]) -> None:
    text = json.dumps(arguments, allow_nan=True)
    assert outcome(lambda: CALLBACK._values(text)) == outcome(lambda: slow_path(CALLBACK, text))
    assert outcome(lambda: MODEL_CALLBACK._values(text)) == outcome(lambda: slow_path(MODEL_CALLBACK, text))


@pytest.mark.parametrize(
    ('text', 'message'),
    [
        ('{"a": 1e400}', 'b: missing required argument'),
        ('{"a": 9223372036854775808, "b": 1, "c": "", "d": [], "e": "s", "p": {"x": 1, "y": 1}}', 'a: Input should'),
        ('{"a": 1, "b": "inf", "c": "", "d": [], "e": "s", "p": {"x": 1, "y": 1}}', 'b: Input should be a finite'),
        (
            '{"a": 1, "b": 1, "c": "", "d": ["1e400"], "e": "s", "p": {"x": 1, "y": 1}, "zz": 1}',
            "unexpected argument 'zz'",
        ),
    ],
)
def test_hostile_numbers_and_strangers_are_named(text: str, message: str) -> None:
    with pytest.raises(ToolExecutionError, match=message):
        CALLBACK.call(text)


@pytest.mark.parametrize(
    'annotation',
    [Any, list, dict[str, Any], complex, tuple[Any, ...]],
)
def test_no_checked_validator_when_numbers_cannot_be_bounded(annotation: Any) -> None:
    assert checked_validator(pydantic.TypeAdapter(annotation)) is None


def test_a_validator_function_or_open_model_keeps_the_walk() -> None:
    class Checked(pydantic.BaseModel):
        n: int

        @pydantic.field_validator('n')
        @classmethod
        def double(cls, n: int) -> int:
            return n * 2

    class Open(pydantic.BaseModel, extra='allow'):
        n: int

    assert checked_validator(pydantic.TypeAdapter(Checked)) is None
    assert checked_validator(pydantic.TypeAdapter(Open)) is None
    assert checked_validator(pydantic.TypeAdapter(PointDict)) is not None
    assert checked_validator(pydantic.TypeAdapter(Label)) is not None


def test_a_complete_model_with_numbers_keeps_the_walk() -> None:
    """pydantic-core validates a complete model with its own prebuilt validator: the bounds could not apply."""
    assert checked_validator(pydantic.TypeAdapter(Point)) is None
    assert function_schema(with_model).checked_arguments is None
    for text in ['{"p": {"x": 1, "y": NaN, "note": null}}', '{"p": {"x": 1e20, "y": 1, "note": null}}']:
        with pytest.raises(ToolExecutionError, match=r"Invalid arguments for tool 'with_model': p\.(x|y): "):
            MODEL_CALLBACK.call(text)
    with pytest.raises(ToolExecutionError, match='finite'):
        FUNCTION_TOOL.call('{"x": 1, "y": Infinity, "note": null}')


FUNCTION_TOOL = FunctionToolCallback.builder('point', lambda point: point).input_type(Point).build()


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(['x', 'y', 'note', 'label', 'z']), VALUES, max_size=5))
def test_function_tool_decoding_equals_the_unchecked_one(arguments: dict[str, Any]) -> None:
    """The input-type decoder with bounded numbers equals plain validation + the number walk."""
    text = json.dumps(arguments, allow_nan=True)
    unchecked = FunctionToolCallback.builder('point', lambda point: point).input_type(Point).build()
    with mock.patch('toolweave.tools.function.checked_validator', return_value=None):
        expected = outcome(lambda: unchecked.call(text))
    assert outcome(lambda: FUNCTION_TOOL.call(text)) == expected


@pytest.mark.parametrize('func', [*SNAPSHOT_FUNCTIONS, shapes], ids=lambda f: f.__name__)
@pytest.mark.parametrize('options', [frozenset(), frozenset(SchemaOption)], ids=['default', 'all-options'])
def test_one_generation_for_all_parameters_equals_one_per_parameter(
    func: Any, options: frozenset[SchemaOption]
) -> None:
    """The input schema from the arguments adapter's single generation equals the per-parameter one."""
    together = schema_module._function_schema.__wrapped__(func, options)
    with mock.patch.object(schema_module, '_generated_together', return_value=None):
        apart = schema_module._function_schema.__wrapped__(func, options)
    if SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT not in options:  # else generated apart
        assert schema_module._generated_together(together.arguments, list(together.parameters)) is not None
    assert together.input_schema == apart.input_schema
    assert list(together.input_schema['properties']) == list(apart.input_schema['properties'])


RAW_SCHEMA = {
    'type': 'object',
    'properties': {'n': {'type': 'integer'}, 'x': {'type': 'number'}, 'tags': {'type': 'array'}, 'meta': {}},
    'required': ['n'],
}
RAW_TOOL = FunctionToolCallback.builder('raw', lambda arguments: arguments).input_schema(RAW_SCHEMA).build()
RAW_VALIDATOR = SchemaValidator(bounded_integers(RAW_TOOL.tool_definition.input_schema))
RAW_AS_WRITTEN = written_failures(RAW_TOOL.tool_definition.input_schema)


def checked_then_walked(text: str) -> Any:
    """The raw-schema decoding without ``int64``: validate, then walk the value for number problems."""
    try:
        value = RAW_VALIDATOR.validate_json(text)
    except SchemaValidationError as exc:
        raise InvalidToolArgumentsError('raw', schema_problems(exc.errors, lambda: RAW_AS_WRITTEN(text))) from None
    except ToolArgumentsError:
        raise
    except ValueError as exc:
        problems = number_problems(parse_arguments(text))
        if problems:
            raise InvalidToolArgumentsError('raw', [f'{_pointer(at)}: {why}' for at, why in problems]) from None
        raise InvalidToolArgumentsError('raw', [f'/: {exc}']) from None
    problems = number_problems(value)
    if problems:
        raise InvalidToolArgumentsError('raw', [f'{_pointer(at)}: {why}' for at, why in problems])
    return value


def decoded(decode: Any, text: str) -> tuple[str, Any]:
    try:
        return 'ok', decode(text)
    except ToolExecutionError as exc:  # the tool's decoder raises invalid arguments ready for the model
        assert isinstance(exc.cause, InvalidToolArgumentsError) and str(exc) == str(exc.cause)
        return type(exc.cause).__name__, str(exc.cause)
    except (InvalidToolArgumentsError, ToolArgumentsError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(['n', 'x', 'tags', 'meta', 'z']), VALUES, max_size=5))
def test_raw_schema_decoding_with_int64_equals_validate_then_walk(arguments: dict[str, Any]) -> None:
    """``validate_json(int64=True)`` leaves nothing for the number walk: same values, same errors."""
    text = json.dumps(arguments, allow_nan=True)
    assert decoded(raw_tool_decode, text) == decoded(checked_then_walked, text)


def raw_tool_decode(text: str) -> Any:
    """What the raw-schema tool's call path decodes (``_validate``, its failures or ``ValueError`` to ``_recover``)."""
    assert RAW_TOOL._validate is not None and RAW_TOOL._recover is not None
    try:
        checked = RAW_TOOL._validate(text, int64=True)
    except ToolArgumentsError:
        raise
    except ValueError as exc:
        return RAW_TOOL._recover(text, exc)
    return RAW_TOOL._recover(text, checked) if type(checked) is list else checked
