"""Issue 12, real providers, core parts (Rust and twin): openai-chat call merging, Gemini dialect, lenient arguments."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest
from support.core_fixtures import IMPLEMENTATIONS, sse_from_payloads
from toolweave.exceptions import ToolArgumentsError


def chunk(*fragments: dict[str, Any], stream_id: str | None = 'chatcmpl-1') -> dict[str, Any]:
    payload: dict[str, Any] = {'choices': [{'index': 0, 'delta': {'tool_calls': list(fragments)}}]}
    if stream_id is not None:
        payload['id'] = stream_id
    return payload


def call(index: int | None, id: str | None = None, name: str | None = None, arguments: str = '') -> dict[str, Any]:
    fragment: dict[str, Any] = {'type': 'function', 'function': {'arguments': arguments}}
    if index is not None:
        fragment['index'] = index
    if id is not None:
        fragment['id'] = id
    if name is not None:
        fragment['function']['name'] = name
    return fragment


def aggregate(core: SimpleNamespace, payloads: list[dict[str, Any]]) -> Any:
    agg = core.StreamAggregator('openai-chat')
    for payload in payloads:
        agg.feed(sse_from_payloads([payload]))
    return agg


def calls(agg: Any) -> list[tuple[int, str, str, str]]:
    return [(c['index'], c['id'], c['name'], c['arguments']) for c in agg.result()['tool_calls']]


# --- openai-chat: several calls at one index (Ollama /v1), order by index, synthesised ids (Mistral) ---------------


def test_a_new_id_at_an_index_holding_another_call_starts_a_new_call(core: SimpleNamespace) -> None:
    """Ollama's /v1 sends every parallel call at index 0, each with its own id."""
    agg = aggregate(
        core,
        [
            chunk(call(0, 'call_a', 'get_weather', '{"city": "Paris"}')),
            chunk(call(0, 'call_b', 'get_time', '{"tz": ')),
            chunk(call(0, None, None, '"CET"}')),  # no id: the latest call at that index
            chunk(call(0, 'call_b', None, '')),  # its own id again: the same call
        ],
    )
    assert calls(agg) == [
        (0, 'call_a', 'get_weather', '{"city": "Paris"}'),
        (1, 'call_b', 'get_time', '{"tz": "CET"}'),
    ]
    assert agg.partial_arguments(1) == {'tz': 'CET'}


def test_a_known_id_at_a_shared_index_goes_back_to_its_call(core: SimpleNamespace) -> None:
    agg = aggregate(
        core,
        [
            chunk(call(0, 'a', 'f', '{"x": ')),
            chunk(call(0, 'b', 'g', '{"y": 2}')),
            chunk(call(0, 'a', None, '1}')),
            chunk(call(0, None, None, '')),
        ],
    )
    assert calls(agg) == [(0, 'a', 'f', '{"x": 1}'), (1, 'b', 'g', '{"y": 2}')]


def test_a_call_without_id_at_an_index_takes_the_first_id_sent(core: SimpleNamespace) -> None:
    agg = aggregate(core, [chunk(call(0, None, 'f', '{"x"')), chunk(call(0, 'late', None, ': 1}'))])
    assert calls(agg) == [(0, 'late', 'f', '{"x": 1}')]


def test_tool_calls_are_ordered_by_index_not_by_arrival(core: SimpleNamespace) -> None:
    agg = aggregate(
        core,
        [
            chunk(call(2, 'c', 'h', '{"n": ')),
            chunk(call(0, 'a', 'f', '{"n": 0}')),
            chunk(call(1, 'b', 'g', '{"n": 1}')),
            chunk(call(2, None, None, '2}')),
        ],
    )
    assert calls(agg) == [(0, 'a', 'f', '{"n": 0}'), (1, 'b', 'g', '{"n": 1}'), (2, 'c', 'h', '{"n": 2}')]
    assert [agg.partial_arguments(i) for i in range(3)] == [{'n': 0}, {'n': 1}, {'n': 2}]
    live = agg.partial_arguments(2, live=True)
    agg.feed(sse_from_payloads([chunk(call(3, 'd', 'k', '{}'))]))
    assert agg.partial_arguments(2, live=True) is live  # a call keeps its live value


SYNTHETIC = re.compile(r'[0-9A-Za-z]{9}')


def test_a_call_without_id_gets_one_synthesised_id_stable_across_its_fragments(core: SimpleNamespace) -> None:
    """Mistral-style: index-0 calls without ids; the id is 9 characters of [0-9A-Za-z] (Mistral's own rule)."""
    payloads = [
        chunk(call(0, None, 'get_weather', '{"city": ')),
        chunk(call(0, None, None, '"Paris"}')),
        chunk(call(1, None, 'get_time', '{}')),
    ]
    agg = core.StreamAggregator('openai-chat')
    seen = []
    for payload in payloads:
        agg.feed(sse_from_payloads([payload]))
        seen.append([c['id'] for c in agg.result()['tool_calls']])
    first, second = seen[-1]
    assert SYNTHETIC.fullmatch(first) and SYNTHETIC.fullmatch(second) and first != second
    assert seen == [[first], [first], [first, second]]
    other = aggregate(core, [chunk(call(0, None, 'get_weather', '{}'), stream_id='chatcmpl-2')])
    assert calls(other)[0][1] != first  # another response, another id
    same = aggregate(IMPLEMENTATIONS['reference' if core.name == 'rust' else 'rust'], payloads)
    assert [c['id'] for c in same.result()['tool_calls']] == [first, second]  # Rust and twin agree


def test_a_synthesised_id_gives_way_to_the_id_the_provider_sends_later(core: SimpleNamespace) -> None:
    agg = aggregate(core, [chunk(call(0, None, 'f', '{')), chunk(call(0, 'real', None, '}'))])
    assert calls(agg) == [(0, 'real', 'f', '{}')]


# --- Gemini dialect: a tool without parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    'schema',
    [
        {'type': 'object', 'properties': {}, 'required': []},
        {'type': 'object', 'properties': {}, 'additionalProperties': False, '$schema': 'x'},
        {'type': 'object'},
        {},
    ],
)
def test_gemini_dialect_gives_none_for_a_schema_without_parameters(core: SimpleNamespace, schema: Any) -> None:
    assert core.to_dialect(schema, 'gemini') is None
    assert core.to_dialect(schema, 'openai-strict') is not None


@pytest.mark.parametrize(
    'schema',
    [
        {'type': 'object', 'properties': {'a': {'type': 'string'}}},
        {'anyOf': [{'type': 'object', 'properties': {'a': {'type': 'string'}}}, {'type': 'null'}, {'type': 'string'}]},
        {'type': 'object', 'properties': {'inner': {'type': 'object', 'properties': {}}}},
    ],
)
def test_gemini_dialect_keeps_schemas_with_parameters(core: SimpleNamespace, schema: Any) -> None:
    out = core.to_dialect(schema, 'gemini')
    assert isinstance(out, dict) and (out.get('properties') or out.get('anyOf'))


# --- lenient arguments: double-encoded, several objects back to back ----------------------------------------------


@pytest.mark.parametrize(
    ('text', 'want'),
    [
        ('"{\\"a\\": 1}"', {'a': 1}),
        ('  "{\\"a\\": {\\"b\\": [1, 2]}}"\n', {'a': {'b': [1, 2]}}),
        ('"\\"{\\\\\\"a\\\\\\": 1}\\""', {'a': 1}),  # encoded twice
        ('"{\'a\': True,}"', {'a': True}),  # the content is repaired too
        ('""', {}),  # an empty string holds no arguments, as empty text
    ],
)
def test_lenient_unwraps_double_encoded_arguments(core: SimpleNamespace, text: str, want: dict[str, Any]) -> None:
    assert core.parse_arguments(text, 'lenient') == want


def test_lenient_double_encoded_non_objects_keep_the_strict_error(core: SimpleNamespace) -> None:
    for text in ['"[1, 2]"', '"hello"', '"42"']:
        with pytest.raises(ToolArgumentsError, match='expected a JSON object, got string'):
            core.parse_arguments(text, 'lenient')
    for mode in ('strict', 'partial'):  # only lenient mode unwraps
        with pytest.raises(ToolArgumentsError, match='expected a JSON object, got string'):
            core.parse_arguments('"{\\"a\\": 1}"', mode)


@pytest.mark.parametrize(
    ('text', 'want'),
    [
        ('{"a": 1}{"b": 2}', {'a': 1, 'b': 2}),
        ('{"a": 1}\n{"b": 2}\n{"c": 3}\n', {'a': 1, 'b': 2, 'c': 3}),
        ('{"a": 1}, {"b": 2}', {'a': 1, 'b': 2}),
        ('[{"a": 1}, {"b": 2}]', {'a': 1, 'b': 2}),
        ('{"a": 1}{"a": 1}', {'a': 1}),  # the same arguments twice: nothing is lost
        ('{"a": {"x": [1]}} {"a": {"x": [1]}, "b": 2}', {'a': {'x': [1]}, 'b': 2}),
        ("```json\n{'a': 1}\n{b: 2,}\n```", {'a': 1, 'b': 2}),
        ('{"a": 1}{"b": 2, "c": tr', {'a': 1, 'b': 2}),  # the last one truncated, read as partial mode does
        ('{"a": 1} and then {"b": 2}', {'a': 1}),  # prose after the object is dropped, as before
    ],
)
def test_lenient_merges_objects_back_to_back_when_keys_do_not_clash(
    core: SimpleNamespace, text: str, want: dict[str, Any]
) -> None:
    assert core.parse_arguments(text, 'lenient') == want


@pytest.mark.parametrize(
    ('text', 'position', 'keys'),
    [
        ('{"city": "Paris"}{"city": "Rome"}', 17, '"city"'),
        ('{"a": 1, "b": 2}\n{"b": 3, "a": 1, "c": 0}', 17, '"b"'),
        ('{"a": 1}{"a": 1.0}', 8, '"a"'),  # 1 and 1.0 are different values
        ('{"a": true}{"a": 1}', 11, '"a"'),
        ('[{"x": {"k": [1]}}, {"x": {"k": [2]}}]', 20, '"x"'),
        ('{"é": 1}{"é": 2}', 8, '"é"'),
        (
            '{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1}{"a":2,"b":2,"c":2,"d":2,"e":2,"f":2,"g":2}',
            43,
            '"a", "b", "c", "d", "e", and 2 more',
        ),
    ],
)
def test_lenient_objects_back_to_back_that_disagree_raise_naming_the_keys(
    core: SimpleNamespace, text: str, position: int, keys: str
) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments(text, 'lenient')
    assert info.value.position == position
    assert f'JSON objects back to back give different values for {keys}: merging them would lose one' in str(info.value)


def test_objects_back_to_back_stay_an_error_in_strict_and_partial_modes(core: SimpleNamespace) -> None:
    for mode in ('strict', 'partial'):
        with pytest.raises(ToolArgumentsError, match='extra data after the JSON value'):
            core.parse_arguments('{"a": 1}{"b": 2}', mode)
