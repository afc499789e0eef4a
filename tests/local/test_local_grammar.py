"""The grammars and checks of LocalChatModel's constrained rounds (no server needed)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from toolweave.providers._local_grammar import (
    FREE_STRING_MAX_LENGTH,
    MAX_ARRAY_ITEMS,
    MAX_CALLS,
    answer_grammar,
    answer_vocabulary,
    call_grammar,
    clean_answer,
    content_words,
    ground_schema,
    mentions_results,
    numbers_in,
    parse_calls,
    question_parts,
    relevant_tools,
    spans,
)
from toolweave.providers._local_prompting import tools_message
from toolweave.tools.definition import ToolDefinition

WEATHER = ToolDefinition(
    'get_weather',
    'Current weather of a city.',
    {
        'type': 'object',
        'properties': {'city': {'type': 'string', 'description': 'City name'}, 'unit': {'enum': ['c', 'f']}},
        'required': ['city'],
        'additionalProperties': False,
    },
)
ORDER = ToolDefinition(
    'place_order',
    'Place an order',
    {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        'type': 'object',
        'properties': {'order': {'$ref': '#/$defs/Order'}},
        'required': ['order'],
        '$defs': {
            'Order': {
                'type': 'object',
                'properties': {'item': {'type': 'string'}, 'quantity': {'type': 'integer', 'default': 1}},
                'required': ['item'],
            }
        },
    },
)


def test_spans_are_word_runs_without_function_words_at_their_edges() -> None:
    found = spans('What is the weather in New York, right now?')
    assert found[:5] == ['weather', 'New', 'York', 'right', 'now']
    assert {'New York', 'weather in New York', 'New York right now'} <= set(found)
    assert not {'the', 'in', 'What', 'in New York', 'the weather', 'York,'} & set(found)
    assert all(len(s.split()) <= 4 for s in found)
    assert 'Ada' in spans("It is Ada's book.")  # possessive stripped


def test_spans_of_cjk_text_are_character_runs() -> None:
    found = spans('北京天气怎么样？')
    assert {'北京', '天气', '北京天气'} <= set(found)
    assert '？' not in ''.join(found)


def test_numbers_in_texts() -> None:
    assert numbers_in(['Convert 10 km and 2.5 mi', '-3 C at 18C', 'v1.2.3 10']) == ['10', '2.5', '-3', '18', '1.2']


@pytest.mark.parametrize(
    ('question', 'parts'),
    [
        ('Compare the weather in Rome and in Madrid.', ['Compare the weather in Rome', 'in Madrid.']),
        ('Weather in Paris, Oslo and Lima?', ['Weather in Paris', 'Oslo', 'Lima?']),
        ('What is the weather in Paris?', ['What is the weather in Paris?']),
        ('Should I go out, and is it cold in Oslo?', ['Should I go out, and is it cold in Oslo?']),  # 'I' names nothing
        ('Convert 5 km and 10 mi.', ['Convert 5 km', '10 mi.']),
    ],
)
def test_question_parts_one_per_named_thing(question: str, parts: list[str]) -> None:
    assert question_parts(question) == parts


def test_question_parts_are_capped() -> None:
    assert len(question_parts('Weather in Paris, Oslo, Lima, Rome and Quito?')) == MAX_CALLS


def test_ground_schema_binds_free_values_to_the_question() -> None:
    schema = {
        'type': 'object',
        'properties': {
            'city': {'type': 'string'},
            'unit': {'type': 'string', 'enum': ['c', 'f']},
            'day': {'type': 'string', 'format': 'date'},
            'count': {'type': 'integer'},
            'ratio': {'type': 'number'},
            'tags': {'type': 'array', 'items': {'type': 'string'}},
            'maybe': {'anyOf': [{'type': 'string'}, {'type': 'null'}]},
        },
    }
    grounded = ground_schema(schema, ['Paris', 'a.b (c)'], ['3', '2.5'])
    props = grounded['properties']
    assert props['city']['pattern'] == r'^(Paris|a\.b\ \(c\))$'
    assert re.fullmatch(props['city']['pattern'], 'a.b (c)') and not re.fullmatch(props['city']['pattern'], 'Tokyo')
    assert 'pattern' not in props['unit'] and 'pattern' not in props['day']  # declared values stay as declared
    assert props['count']['enum'] == [3]  # integers: only the whole numbers
    assert props['ratio']['enum'] == [3, 2.5]
    assert props['tags']['maxItems'] == MAX_ARRAY_ITEMS and 'pattern' in props['tags']['items']
    assert 'pattern' in props['maybe']['anyOf'][0]
    assert 'pattern' not in schema['properties']['city']  # the tool's own schema is untouched


def test_ground_schema_without_question_words_or_numbers() -> None:
    schema = {
        'type': 'object',
        'properties': {
            'q': {'type': 'string'},
            'limit': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]},
            'count': {'type': 'integer', 'minimum': 5},
            'size': {'type': 'number'},
        },
        'required': ['q', 'count', 'size'],
    }
    grounded = ground_schema(schema, [], [])
    assert grounded['properties'] == {
        'q': {'type': 'string', 'maxLength': FREE_STRING_MAX_LENGTH},  # bounded, so the call ends
        'count': {'type': 'integer', 'minimum': 5, 'enum': [5]},  # required: its minimum
        'size': {'type': 'number', 'enum': [1]},
    }  # the optional number is left out: nothing in the question to fill it with


def test_number_only_words_fill_only_id_like_strings() -> None:
    schema = {
        'type': 'object',
        'properties': {
            'item': {'type': 'string'},
            'order_id': {'type': 'string'},
            'ref': {'description': 'Order number'},
        },
    }
    grounded = ground_schema(schema, ['teas', '1002'], ['1002'])['properties']
    assert grounded['item']['pattern'] == '^(teas)$'
    assert grounded['order_id']['pattern'] == '^(teas|1002)$'


def _json_rules(grammar: str) -> dict[str, Any]:
    return {
        line.split(':', 1)[0]: json.loads(line.split('%json ', 1)[1])
        for line in grammar.splitlines()
        if '%json' in line
    }


def test_call_grammar_one_call_per_part_over_every_tool() -> None:
    grammar = call_grammar([WEATHER, ORDER], ['weather in Rome', 'in Madrid'], ['2'])
    lines = grammar.splitlines()
    assert lines[0] == '%llguidance {}'
    assert lines[1] == 'start: call_0 call_1'
    assert 'call_0: "<tool_call>" (tool_0_0 | tool_0_1) "</tool_call>"' in lines
    rules = _json_rules(grammar)
    assert set(rules) == {'tool_0_0', 'tool_0_1', 'tool_1_0', 'tool_1_1'}
    weather = rules['tool_1_0']
    assert weather['properties']['name'] == {'const': 'get_weather'}
    assert weather['required'] == ['name', 'arguments'] and weather['additionalProperties'] is False
    assert weather['properties']['arguments']['properties']['city']['pattern'] == '^(Madrid)$'  # part 2's words
    assert (
        rules['tool_0_0']['properties']['arguments']['properties']['city']['pattern']
        == r'^(weather|Rome|weather\ in\ Rome)$'
    )
    order = rules['tool_0_1']
    assert order['$defs']['Order']['properties']['item']['pattern'].startswith('^(')  # $defs hoisted, grounded
    assert order['properties']['arguments']['properties']['order'] == {'$ref': '#/$defs/Order'}
    assert '$schema' not in order['properties']['arguments']
    assert order['x-guidance']['whitespace_flexible'] is False


def test_a_search_query_is_the_question_s_content_words() -> None:
    search = ToolDefinition(
        'toolSearchTool', 'Search tools', {'type': 'object', 'properties': {'query': {'type': 'string'}}}
    )
    grammar = call_grammar([search], ['What is the weather in Beijing tomorrow?'], [], whole=True)
    query = _json_rules(grammar)['tool_0_0']['properties']['arguments']['properties']['query']
    assert query['pattern'] == r'^(weather\ Beijing\ tomorrow)$'
    assert content_words('北京明天天气怎么样？') == '北京明天天气怎么样'


def test_call_grammar_needs_tools_and_parts() -> None:
    with pytest.raises(ValueError, match='at least one tool'):
        call_grammar([], ['x'], [])
    with pytest.raises(ValueError, match='at least one tool'):
        call_grammar([WEATHER], [], [])


def test_answer_vocabulary_is_the_conversation_and_common_words() -> None:
    words = answer_vocabulary(['What is the weather in Paris?', '18 degrees C and sunny, 2.5 mm'])
    assert {'Paris', 'paris', 'weather', 'Weather', 'sunny', '18', '2.5', 'It', 'is'} <= set(words)
    assert 'Tokyo' not in words and '20' not in words and 'prochains' not in words
    assert len(words) == len(set(words))


def test_answer_grammar_is_one_sentence_of_the_vocabulary() -> None:
    grammar = answer_grammar(['It', 'is', '18', 'Paris'])
    assert grammar.splitlines() == [
        '%llguidance {}',
        'start: WORD (GAP WORD)* END',
        'WORD: "Paris" | "18" | "It" | "is"',
        'GAP: /[ ,;:]+/',
        'END: /[.!?]/',
    ]
    assert 'WORD: "a\\"b"' in answer_grammar(['a"b'])  # quoted as a Lark string
    with pytest.raises(ValueError, match='at least one word'):
        answer_grammar([])


def test_parse_calls_in_order_without_repeats() -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
        '<tool_call>not json</tool_call><tool_call>{"name": 3, "arguments": {}}</tool_call>'
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Madrid"}}</tool_call>'
    )
    assert parse_calls(text) == [
        ('get_weather', '{"city": "Rome"}'),
        ('get_weather', '{"city": "Madrid"}'),
    ]  # as written
    assert parse_calls('no calls') == []
    assert parse_calls('<tool_call>{"arguments":{"a":1},"name":"x"}</tool_call>') == [('x', '{"a":1}')]  # re-encoded


@pytest.mark.parametrize(
    ('text', 'clean'),
    [
        ('It is sunny.<end_of_turn>\n<start_of_turn>user\nmore', 'It is sunny.'),
        ('<tool_call>{"name": "x"}</tool_call> It is sunny.', 'It is sunny.'),
        ('It is <tool_response>18 C</tool_response> sunny <eos>', 'It is sunny'),
        ('Half <tool_call>{"name"', 'Half'),
        ('  a\n b  ', 'a b'),
    ],
)
def test_clean_answer(text: str, clean: str) -> None:
    assert clean_answer(text) == clean


def test_mentions_results() -> None:
    results = ['18 degrees C and sunny in Paris']
    assert mentions_results('It is sunny in Paris.', results, 'What is the weather in Paris?')
    assert mentions_results('It is 18 degrees.', results, 'What is the weather in Paris?')
    assert not mentions_results('What is the weather in Paris?', results, 'What is the weather in Paris?')  # an echo
    assert not mentions_results('According to get_weather, (the result).', results, 'Weather in Paris?')
    # turn 2: copying turn 1's answer is not an answer about Tokyo
    tokyo = ['18 degrees C and sunny in Tokyo']
    earlier = ['18 degrees C and sunny in Paris']
    assert not mentions_results('18 degrees C and sunny in Paris.', tokyo, 'And in Tokyo?', earlier)
    assert mentions_results('It is sunny in Tokyo.', tokyo, 'And in Tokyo?', earlier)
    assert not mentions_results('Saved.', ['Done'], 'Save it.')
    assert mentions_results('Anything.', [], 'Save it.')  # nothing to restate


def test_relevant_tools_by_shared_words() -> None:
    search = ToolDefinition('search', 'Search the documentation.', {'type': 'object', 'properties': {'query': {}}})
    tools = [WEATHER, ORDER, search]
    assert relevant_tools(tools, ['Please order 2 teas.']) == (ORDER,)
    assert relevant_tools(tools, ['Search the docs for weather limits.', '']) == (WEATHER, search)  # a tie: both
    assert relevant_tools(tools, ['And in Tokyo?', 'What is the weather in Paris?']) == (WEATHER,)  # the turn before
    assert relevant_tools(tools, ['Hello there.']) == ()  # nothing shared


def test_tools_message_lists_every_tool() -> None:
    text = tools_message([WEATHER, ORDER])
    listed = text.split('<tools>\n')[1].split('\n</tools>')[0].splitlines()
    assert [json.loads(line)['name'] for line in listed] == ['get_weather', 'place_order']
    assert json.loads(listed[0])['parameters'] == WEATHER.input_schema
    assert '<tool_call>' in text and '<tool_response>' in text
