"""One tool call through FunctionToolCallback / MethodToolCallback: what the lean per-call path must keep (issue 14).

The blank-input check reads the ends of the text instead of stripping a copy, the default converter's
``str`` result skips the converter call, invalid arguments raise one ``ToolExecutionError`` built by the
decoder, and the exceptions of that path keep no per-instance dict. Each promise below is what the
slower path gave: the same return values, exception types, messages, ``cause``/``__cause__`` and fields.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import pickle
from typing import Any

import pydantic
import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave.chat.content import Media
from toolweave.exceptions import (
    InvalidToolArgumentsError,
    SchemaValidationError,
    ToolArgumentsError,
    ToolExecutionError,
)
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from toolweave.tools.converter import ContentResult, DefaultToolCallResultConverter
from toolweave.tools.definition import ToolDefinition
from toolweave.tools.method import convert_result, validate_json
from typing_extensions import TypedDict

SCHEMA = {
    'type': 'object',
    'properties': {'n': {'type': 'integer'}, 'tags': {'type': 'array', 'items': {'type': 'string'}}},
    'required': ['n'],
}


class Point(pydantic.BaseModel):
    x: int
    y: int


class PointDict(TypedDict):
    x: int
    y: int


def raw_tool(func: Any = lambda arguments: arguments['n']) -> FunctionToolCallback:
    return FunctionToolCallback.builder('raw', func).input_schema(SCHEMA).build()


def typed_tool() -> FunctionToolCallback:
    return FunctionToolCallback.builder('typed', lambda p: p.x + p.y).input_type(Point).build()


def supplier_tool() -> FunctionToolCallback:
    return FunctionToolCallback.builder('supplier', lambda: 'supplied').build()


def method_tool() -> MethodToolCallback:
    def move(point: PointDict, label: str = 'p') -> str:
        return f'{label}:{point["x"]},{point["y"]}'

    return MethodToolCallback(move)


TOOLS = {'raw': raw_tool, 'typed': typed_tool, 'supplier': supplier_tool, 'method': method_tool}

WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]


def call(tool: Any, text: Any, run_async: bool) -> Any:
    return asyncio.run(tool.acall(text)) if run_async else tool.call(text)


# --- blank input -------------------------------------------------------------------------------


def test_whitespace_table_is_what_str_strip_removes() -> None:
    """The characters the check treats as blank are exactly those ``str.strip()`` removes (incl. U+3000, U+001C)."""
    assert {'\u3000', '\x1c', '\x85', '\u2028', '\xa0', '\t', '\n', '\x0b', '\x0c', '\r', ' '} <= set(WHITESPACE)
    assert all(not c.strip() for c in WHITESPACE)
    assert '\u200b' not in WHITESPACE and '\ufeff' not in WHITESPACE  # not stripped: not blank either


@pytest.mark.parametrize('kind', list(TOOLS))
@pytest.mark.parametrize('run_async', [False, True], ids=['call', 'acall'])
@pytest.mark.parametrize('text', ['', ' ', '\t\n\r', '\u3000', '\x1c\x1d\x1e\x1f', '\x85\u2028\u2029', '\xa0 \u3000'])
def test_blank_input_is_refused_with_value_error(kind: str, run_async: bool, text: str) -> None:
    with pytest.raises(ValueError, match='^tool_input cannot be null or empty$') as info:
        call(TOOLS[kind](), text, run_async)
    assert type(info.value) is ValueError


@pytest.mark.parametrize('kind', list(TOOLS))
@pytest.mark.parametrize('text', ['\u200b', '\ufeff', ' \u200b '])
def test_zero_width_text_is_not_blank(kind: str, text: str) -> None:
    """Characters ``str.strip`` keeps are not blank: the text goes on to parsing (and fails there, or is ignored)."""
    tool = TOOLS[kind]()
    if kind == 'supplier':
        assert tool.call(text) == 'supplied'  # a supplier ignores its argument text
        return
    with pytest.raises(ToolExecutionError) as info:
        tool.call(text)
    assert isinstance(info.value.cause, ToolArgumentsError)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(WHITESPACE) | st.sampled_from('{}"n:1 \u200bx'), max_size=12))
def test_blank_check_equals_strip(text: str) -> None:
    """Differential: ``ValueError`` exactly when ``not text.strip()``, for every kind of tool."""
    for make in TOOLS.values():
        try:
            make().call(text)
            refused = False
        except ValueError as exc:
            refused = type(exc) is ValueError
        except ToolExecutionError:
            refused = False
        assert refused == (not text.strip()), (make, text)


@pytest.mark.parametrize('kind', list(TOOLS))
def test_argument_text_of_another_type_is_a_type_error(kind: str) -> None:
    with pytest.raises(TypeError, match='must be the argument JSON text'):
        TOOLS[kind]().call(b'{"n": 1}')


def test_json_whitespace_around_the_object_is_accepted_other_whitespace_is_not_json() -> None:
    assert raw_tool().call('\r\n {"n": 7} \t') == '7'
    assert method_tool().call(' {"point": {"x": 1, "y": 2}}\n') == 'p:1,2'
    with pytest.raises(ToolExecutionError) as info:  # not blank, and U+3000 is not JSON whitespace
        raw_tool().call('\u3000{"n": 7}')
    assert type(info.value.cause) is ToolArgumentsError and info.value.cause.position == 0


# --- invalid arguments: one ToolExecutionError, the documented chain ---------------------------


INVALID = {
    'raw': ('{"n": "seven"}', 'Invalid arguments for tool \'raw\': /n: "seven" is not of type "integer"'),
    'typed': ('{"x": 1, "y": "two"}', "Invalid arguments for tool 'typed': y: Input should be a valid integer"),
    'method': ('{"point": {"x": 1, "y": "two"}}', "Invalid arguments for tool 'move': point.y: Input should be a"),
}


@pytest.mark.parametrize('kind', list(INVALID))
@pytest.mark.parametrize('run_async', [False, True], ids=['call', 'acall'])
def test_invalid_arguments_raise_tool_execution_error_caused_by_invalid_tool_arguments(
    kind: str, run_async: bool
) -> None:
    tool = TOOLS[kind]()
    text, message = INVALID[kind]
    with pytest.raises(ToolExecutionError) as info:
        call(tool, text, run_async)
    error = info.value
    assert type(error) is ToolExecutionError
    assert str(error).startswith(message) and error.args == (str(error),)
    assert error.tool_definition is tool.tool_definition
    cause = error.cause
    assert cause is error.__cause__ and error.__suppress_context__
    assert type(cause) is InvalidToolArgumentsError
    assert cause.tool_name == tool.tool_definition.name
    assert cause.message == str(cause) == str(error) and cause.args == (cause.message,)
    assert cause.message == f"Invalid arguments for tool '{cause.tool_name}': " + '; '.join(cause.problems)
    assert isinstance(cause.problems, tuple) and len(cause.problems) == 1


def test_every_problem_is_listed_in_one_error() -> None:
    with pytest.raises(ToolExecutionError) as info:
        raw_tool().call('{"n": "seven", "tags": [1, "b", 2]}')
    problems = info.value.cause.problems
    assert sorted(problems) == ['/n: "seven" is not of type "integer"', '/tags/0: 1 is not of type "string"',
                                '/tags/2: 2 is not of type "string"']  # fmt: skip


@pytest.mark.parametrize('kind', ['raw', 'typed', 'method'])
@pytest.mark.parametrize('run_async', [False, True], ids=['call', 'acall'])
def test_text_that_is_not_json_is_caused_by_tool_arguments_error(kind: str, run_async: bool) -> None:
    tool = TOOLS[kind]()
    with pytest.raises(ToolExecutionError) as info:
        call(tool, '{"n": 1,', run_async)
    cause = info.value.cause
    assert type(cause) is ToolArgumentsError and cause is info.value.__cause__
    assert str(info.value) == f"Invalid arguments for tool '{tool.tool_definition.name}': {cause}"
    assert cause.position == 8 and cause.line == 1 and cause.column == 9


@pytest.mark.parametrize(
    ('kind', 'text', 'problem'),
    [
        ('raw', '{"n": 18446744073709551616}', '/n: '),
        ('raw', '{"n": 1, "tags": ["a"], "x": 1e400}', '/'),
        ('typed', '{"x": 18446744073709551616, "y": 1}', 'x: '),
        ('method', '{"point": {"x": 1, "y": 18446744073709551616}}', 'point.y: '),
    ],
)
def test_numbers_beyond_what_a_tool_takes_are_invalid_arguments(kind: str, text: str, problem: str) -> None:
    """The rarer paths (the number walk, the core refusing a number) keep the same chain."""
    with pytest.raises(ToolExecutionError) as info:
        TOOLS[kind]().call(text)
    cause = info.value.cause
    assert type(cause) is InvalidToolArgumentsError and info.value.__cause__ is cause
    assert cause.problems[0].startswith(problem) and str(info.value) == cause.message


def test_a_validator_of_the_tools_own_type_raising_is_the_tools_failure() -> None:
    class Picky(pydantic.BaseModel):
        x: int

        @pydantic.field_validator('x')
        @classmethod
        def no_thirteen(cls, value: int) -> int:
            if value == 13:
                raise LookupError('unlucky')
            return value

    tool = FunctionToolCallback.builder('picky', lambda p: p.x).input_type(Picky).build()
    with pytest.raises(ToolExecutionError) as info:
        tool.call('{"x": 13}')
    assert type(info.value.cause) is LookupError and str(info.value) == 'unlucky'
    assert tool.call('{"x": 12}') == '12'


def test_the_functions_own_tool_execution_error_is_not_wrapped() -> None:
    definition = ToolDefinition('other', 'd', {'type': 'object', 'properties': {}})
    own = ToolExecutionError(definition, ValueError('inner'))

    def fail(arguments: dict[str, Any]) -> str:
        raise own

    with pytest.raises(ToolExecutionError) as info:
        raw_tool(fail).call('{"n": 1}')
    assert info.value is own


def test_deferred_tool_checks_arguments_then_fails_in_call_and_acall() -> None:
    tool = FunctionToolCallback.builder('later', None).input_schema(SCHEMA).build()
    with pytest.raises(ToolExecutionError) as info:
        tool.call('{"n": "x"}')
    assert type(info.value.cause) is InvalidToolArgumentsError
    for run_async in (False, True):
        with pytest.raises(
            ToolExecutionError, match="^tool 'later' is deferred: its result comes from outside the run$"
        ):
            call(tool, '{"n": 1}', run_async)
    assert tool.function is None and tool.tool_metadata.deferred


# --- the result converter ----------------------------------------------------------------------


class Upper(DefaultToolCallResultConverter):
    def convert(self, result: Any, return_type: Any | None = None) -> str:
        return str(result).upper()


def test_default_converter_results() -> None:
    assert raw_tool(lambda a: None).call('{"n": 1}') == 'Done'
    assert raw_tool(lambda a: {'b': [1, 2.5], 'a': None}).call('{"n": 1}') == '{"b":[1,2.5],"a":null}'
    assert raw_tool(lambda a: 'as is "quoted"').call('{"n": 1}') == 'as is "quoted"'
    text = 'same object'
    assert raw_tool(lambda a: text).call('{"n": 1}') is text
    assert method_tool().call('{"point": {"x": 1, "y": 2}, "label": "q"}') == 'q:1,2'


def test_content_result_keeps_its_media() -> None:
    media = Media('image/png', b'\x89PNG\r\n\x1a\n')
    result = ContentResult('chart', [media])
    got = raw_tool(lambda a: result).call('{"n": 1}')
    assert got is result and got.media == (media,)


def test_a_converter_subclass_is_called_for_str_results_too() -> None:
    tool = FunctionToolCallback.builder('up', lambda: 'quiet').result_converter(Upper()).build()
    assert tool.call('{}') == 'QUIET'
    assert MethodToolCallback(lambda: 'quiet', name='up2', result_converter=Upper()).call('{}') == 'QUIET'


def test_converter_failures_become_tool_execution_errors() -> None:
    class Broken:
        def convert(self, result: Any, return_type: Any | None = None) -> Any:
            if result == 'raise':
                raise KeyError('k')
            return 42

    tool = (
        FunctionToolCallback.builder('b', lambda a: a['n'])
        .input_schema({'type': 'object', 'properties': {'n': {}}})
        .result_converter(Broken())
        .build()
    )
    with pytest.raises(ToolExecutionError, match="^KeyError: 'k'$") as info:
        tool.call('{"n": "raise"}')
    assert type(info.value.cause) is KeyError
    with pytest.raises(ToolExecutionError, match='returned int, not str') as info:
        tool.call('{"n": "x"}')
    assert type(info.value.cause) is TypeError
    with pytest.raises(ToolExecutionError, match='not JSON serializable'):
        raw_tool(lambda a: object()).call('{"n": 1}')


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.text(), st.integers(-(2**63), 2**63 - 1), st.dictionaries(st.text(), st.booleans())))
def test_convert_result_equals_the_default_converter(value: Any) -> None:
    """Differential: the shortcut for ``str`` gives what ``DefaultToolCallResultConverter.convert`` gives."""
    definition = ToolDefinition('t', 'd', {'type': 'object', 'properties': {}})
    converter = DefaultToolCallResultConverter()
    expected = converter.convert(value, None)
    got = convert_result(definition, converter, value)
    assert got == expected and type(got) is type(expected)
    subclass = ContentResult(value, []) if isinstance(value, str) else None
    if subclass is not None:
        assert convert_result(definition, converter, subclass) is converter.convert(subclass, None)


# --- the exceptions of the path ------------------------------------------------------------------


@pytest.mark.parametrize(
    'error',
    [
        InvalidToolArgumentsError('t', ['a: bad', 'b: worse']),
        SchemaValidationError('/a: bad', [{'pointer': '/a', 'keyword': 'type', 'message': 'bad'}]),
        ToolArgumentsError('not JSON at 3', 3, 'ex', 1, 4),
    ],
    ids=lambda e: type(e).__name__,
)
def test_path_exceptions_keep_args_fields_pickle_copy_and_notes(error: Exception) -> None:
    fields = {name: getattr(error, name) for name in type(error).__slots__}  # type: ignore[attr-defined]
    assert error.args == (str(error),) and fields
    for again in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(again) is type(error) and again.args == error.args
        assert {name: getattr(again, name) for name in fields} == fields
    error.add_note('a note')
    error.extra = 1  # type: ignore[attr-defined]  # arbitrary attributes still work
    assert error.__notes__ == ['a note'] and error.extra == 1  # type: ignore[attr-defined]


def test_tool_execution_error_survives_pickle_and_copy() -> None:
    definition = ToolDefinition('t', 'd', {'type': 'object', 'properties': {}})
    error = ToolExecutionError(definition, ValueError('boom'), 'tool t failed: boom')
    for again in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(again) is ToolExecutionError and again.args == ('tool t failed: boom',)
        assert again.tool_definition == definition
        assert type(again.cause) is ValueError and again.cause.args == ('boom',)
        assert again.__cause__ is again.cause


def test_tool_execution_error_fields_and_message() -> None:
    definition = ToolDefinition('t', 'd', {'type': 'object', 'properties': {}})
    cause = KeyError('key')
    error = ToolExecutionError(definition, cause)
    assert error.args == ("KeyError: 'key'",) and str(error) == "KeyError: 'key'"
    assert error.tool_definition is definition and error.cause is cause and error.__cause__ is cause
    assert error.__suppress_context__
    given_message = ToolExecutionError(definition, cause, 'told')
    assert given_message.args == ('told',) and repr(given_message) == "ToolExecutionError('told')"
    given_message.add_note('n')
    assert given_message.__notes__ == ['n']


# --- the one-step validation without TypeAdapter's wrapper ---------------------------------------


class Deferred(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(defer_build=True)

    x: int
    ratio: float = 0.5


def test_validate_json_of_a_deferred_adapter_goes_through_the_adapter() -> None:
    """A ``defer_build`` model's adapter holds a mock validator: that one is not called directly."""
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Deferred)
    assert type(adapter.validator) is not pydantic_core.SchemaValidator
    assert validate_json(adapter, '{"x": 2}') == Deferred(x=2)
    tool = FunctionToolCallback.builder('deferred_model', lambda d: d.x + d.ratio).input_type(Deferred).build()
    assert tool.call('{"x": 2}') == '2.5'
    with pytest.raises(ToolExecutionError, match=r"^Invalid arguments for tool 'deferred_model': x: Input should"):
        tool.call('{"x": "two"}')

    def use(d: Deferred, n: float) -> float:
        return d.x * n

    assert MethodToolCallback(use).call('{"d": {"x": 3}, "n": 2}') == '6.0'


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(['x', 'ratio', 'y']), inner, max_size=3)
    ),
    max_leaves=8,
)


def outcome(validate: Any, text: str) -> tuple[str, Any]:
    try:
        return 'ok', validate(text)
    except pydantic.ValidationError as exc:
        return 'error', exc.errors(include_url=False)


@settings(max_examples=200, deadline=None)
@given(JSONISH)
def test_validate_json_equals_type_adapter_validate_json(value: Any) -> None:
    """Differential: the direct call gives ``TypeAdapter.validate_json``'s value or errors."""
    import json

    text = json.dumps(value, allow_nan=True)
    for adapter in (pydantic.TypeAdapter(Point), pydantic.TypeAdapter(PointDict), pydantic.TypeAdapter(list[float])):
        assert type(adapter.validator) is pydantic_core.SchemaValidator
        direct = outcome(functools.partial(validate_json, adapter), text)
        assert repr(direct) == repr(outcome(adapter.validate_json, text))
