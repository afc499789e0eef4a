"""A raw-schema FunctionToolCallback calls the core's ``validate_json`` straight from ``_arguments`` (no decoder
frame) and hands a ``ValueError`` to the schema recovery: every answer equals the decoder's (``_schema_decoder``,
which MCP tools use): the value, or the exception's type, message, cause and suppressed context."""

from __future__ import annotations

import json
from typing import Any

import hypothesis.strategies as st
from hypothesis import given, settings
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import FunctionToolCallback
from toolweave.tools.function import _schema_decoder
from toolweave.tools.method import syntax_error

SCHEMA = {
    'type': 'object',
    'properties': {
        'n': {'type': 'integer'},
        'x': {'type': 'number', 'maximum': 10},
        'tags': {'type': 'array', 'items': {'enum': ['a', 'b']}},
        'free': {},
    },
    'required': ['n'],
    'additionalProperties': False,
}
TOOL = FunctionToolCallback.builder('t', lambda args: json.dumps(args, sort_keys=True)).input_schema(SCHEMA).build()
DECODE = _schema_decoder(TOOL.tool_definition, TOOL._validate.__self__)  # type: ignore[union-attr]


def _outcome(call: Any) -> Any:
    try:
        return 'value', call()
    except Exception as exc:  # noqa: BLE001 - compared by type, text, cause
        cause = exc.__cause__
        return type(exc).__name__, str(exc), type(cause).__name__, str(cause), exc.__suppress_context__


def _decoded(text: str) -> Any:
    """What ``_arguments`` answered before: the decoder, with its syntax errors wrapped as ``_arguments`` does."""
    try:
        return (DECODE(text),)
    except ToolExecutionError:
        raise
    except Exception as exc:
        if type(exc).__name__ == 'ToolArgumentsError':
            raise syntax_error(TOOL.tool_definition, exc) from exc  # type: ignore[arg-type]
        raise ToolExecutionError(TOOL.tool_definition, exc) from exc


NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(['1e400', '-1e400', 'NaN', '2.0', '9223372036854775808']),
)
VALUES = st.one_of(NUMBERS, st.sampled_from(['"a"', '"c"', 'null', 'true', '[]', '["a", "b"]', '["z"]', '{}']))
MEMBERS = st.dictionaries(st.sampled_from(['n', 'x', 'tags', 'free', 'other']), VALUES, max_size=5)


def _text(members: dict[str, Any]) -> str:
    return '{' + ', '.join(f'"{k}": {v}' for k, v in members.items()) + '}'


@settings(max_examples=400, deadline=None)
@given(st.one_of(MEMBERS.map(_text), st.sampled_from(['{"n": 1', '[1]', '{"n": 1} x', 'nope'])))
def test_the_fast_path_answers_as_the_decoder(text: str) -> None:
    assert _outcome(lambda: TOOL._arguments(text, None)) == _outcome(lambda: _decoded(text))


def test_the_fast_path_covers_each_kind_of_answer() -> None:
    assert TOOL.call('{"n": 1, "tags": ["a"]}') == '{"n": 1, "tags": ["a"]}'
    for text, cause in [
        ('{"n": "one"}', 'InvalidToolArgumentsError'),  # schema failure
        ('{"n": 1e400}', 'InvalidToolArgumentsError'),  # a number JSON Schema cannot hold
        ('{"n": 1', 'ToolArgumentsError'),  # not JSON
    ]:
        outcome = _outcome(lambda text=text: TOOL._arguments(text, None))
        assert outcome[0] == 'ToolExecutionError' and outcome[2] == cause
        assert outcome == _outcome(lambda text=text: _decoded(text))
    # beyond int64 where the schema bounds nothing: named by the number walk, as the decoder names it
    beyond = '{"n": 1, "free": 99999999999999999999}'
    outcome = _outcome(lambda: TOOL._arguments(beyond, None))
    assert outcome[0] == 'ToolExecutionError' and '/free: ' in outcome[1]
    assert outcome == _outcome(lambda: _decoded(beyond))
