r"""How :class:`~toolweave.providers.local.LocalChatModel` gets a *base* 270M model to call tools.

The Gemma 3 270M shipped on PyPI is the pretrained model, not the instruction-tuned one: it has no
chat template and no notion of tools. Three things make it call tools reliably (measured on the
real model, see ``notes/local-model.md``):

1. :data:`HERMES_GEMMA_TEMPLATE`: Gemma turns with the tools listed in ``<tools></tools>`` and calls
   written as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``. llama.cpp recognises the
   Hermes markers, constrains the call with a grammar and returns OpenAI ``tool_calls``.
2. A few example exchanges (question -> call -> result -> one-line answer) before the real question
   (:func:`example_messages`). The example whose question shares the most words with the real
   question goes last, because this model copies the nearest example most of all.
3. Per-round stop sequences (chosen in ``LocalChatModel``): ``</tool_call>`` on the calling round,
   ``\n`` on the answering round (the example answers end with a newline to teach that), and on the
   answering round a ``logit_bias`` that bans ``<``: after a tool result the base model otherwise
   often opens its turn with another ``<tool_call>`` or an echoed ``<tool_response>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from toolweave.chat.messages import AssistantMessage, Message, ToolCall, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.tools.definition import ToolDefinition

__all__ = ['HERMES_GEMMA_TEMPLATE', 'ToolExample', 'example_messages', 'synthesise_example']

HERMES_GEMMA_TEMPLATE = """{{- bos_token -}}
{%- if tools -%}
<start_of_turn>user
You have access to these tools:
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor -%}
</tools>
To call a tool, reply with <tool_call>{"name": "<tool name>", "arguments": {<arguments>}}</tool_call>. \
Tool results come back inside <tool_response></tool_response>; then answer in one short sentence.<end_of_turn>
{% endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' or message.role == 'user' -%}
<start_of_turn>user
{{ message.content }}<end_of_turn>
{% elif message.role == 'assistant' -%}
<start_of_turn>model
{% if message.content %}{{ message.content }}{% endif -%}
{%- if message.tool_calls -%}
{%- for tc in message.tool_calls -%}
{%- set f = tc.function if tc.function is defined else tc -%}
<tool_call>{"name": "{{ f.name }}", "arguments": \
{% if f.arguments is string %}{{ f.arguments }}{% else %}{{ f.arguments | tojson }}{% endif %}}</tool_call>
{%- endfor -%}
{%- endif -%}
<end_of_turn>
{% elif message.role == 'tool' -%}
<start_of_turn>user
<tool_response>{{ message.content }}</tool_response><end_of_turn>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<start_of_turn>model
{% endif -%}
"""
"""Jinja chat template (llama.cpp ``--jinja``); backslash-newlines join lines, the rest is verbatim."""


@dataclass(frozen=True)
class ToolExample:
    """One example exchange shown to the model before the real question.

    Attributes:
        question: What the user asks, phrased like the real questions will be.
        tool_name: The tool the model should call.
        arguments: The call's argument object.
        result: What the tool returned (text).
        answer: The one-sentence answer written from ``result``.
    """

    question: str
    tool_name: str
    arguments: Mapping[str, Any]
    result: str
    answer: str


_STRING_SAMPLES: tuple[tuple[tuple[str, ...], str | tuple[str, ...]], ...] = (
    (('city', 'location', 'place', 'town', 'destination', 'origin'), 'Paris'),
    (('country',), 'France'),
    (('name', 'user', 'person'), 'Alice'),
    (('date', 'day'), '2024-05-01'),
    (('time',), '12:00'),
    (('email',), 'alice@example.com'),
    (('url', 'link'), 'https://example.com'),
    (('query', 'text', 'search', 'q'), 'Paris'),
    (('unit',), 'c'),
    (('symbol', 'ticker', 'stock'), ('AAPL', 'MSFT', 'GOOG')),
    (('currency',), 'EUR'),
    (('language', 'lang'), 'en'),
)


_PLACES = ('Paris', 'Tokyo', 'Berlin')
_NUMBERS = (10, 3, 25)


def _sample_string(name: str, variant: int = 0) -> str:
    lowered = name.lower()
    for keys, value in _STRING_SAMPLES:
        if any(key in lowered for key in keys):
            if isinstance(value, tuple):
                return value[variant % len(value)]
            return _PLACES[variant % len(_PLACES)] if value == 'Paris' else value
    return _PLACES[variant % len(_PLACES)]


def _first_declared(schema: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(True, value)`` for an enum's first value, a const, an example or a default; else ``(False, None)``."""
    for key in ('enum', 'examples'):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return True, options[0]
    if 'const' in schema:
        return True, schema['const']
    if schema.get('default') is not None:
        return True, schema['default']
    return False, None


def _sample_value(name: str, schema: Mapping[str, Any], depth: int = 0, variant: int = 0) -> Any:
    """A plausible value for one property: enum first, const, default, then by type."""
    declared, value = _first_declared(schema)
    if declared:
        return value
    for key in ('anyOf', 'oneOf'):
        variants = schema.get(key)
        if isinstance(variants, list):
            for choice in variants:
                if isinstance(choice, Mapping) and choice.get('type') != 'null':
                    return _sample_value(name, choice, depth, variant)
    kind = schema.get('type')
    if isinstance(kind, list):
        kind = next((k for k in kind if k != 'null'), 'string')
    if kind in ('integer', 'number'):
        return _NUMBERS[variant % len(_NUMBERS)]
    if kind == 'boolean':
        return True
    if kind == 'array':
        items = schema.get('items')
        return [_sample_value(name, items, depth + 1, variant)] if isinstance(items, Mapping) and depth < 3 else []
    if kind == 'object':
        return _sample_arguments(schema, depth + 1, variant) if depth < 3 else {}
    return _sample_string(name, variant)


def _sample_arguments(schema: Mapping[str, Any], depth: int = 0, variant: int = 0) -> dict[str, Any]:
    """Sample values for every property; properties sharing one enum get distinct values (``from``/``to`` units)."""
    properties = schema.get('properties')
    if not isinstance(properties, Mapping):
        return {}
    used: dict[str, int] = {}
    values: dict[str, Any] = {}
    for name, prop in properties.items():
        prop = prop if isinstance(prop, Mapping) else {}
        enum = prop.get('enum')
        if isinstance(enum, list) and len(enum) > 1:
            key = orjson.dumps(enum, default=str).decode()
            values[str(name)] = enum[used.get(key, 0) % len(enum)]
            used[key] = used.get(key, 0) + 1
        else:
            values[str(name)] = _sample_value(str(name), prop, depth, variant)
    return values


def _humanise(name: str) -> str:
    return re.sub(r'[_\-.]+', ' ', re.sub(r'(?<=[a-z0-9])(?=[A-Z])', ' ', name)).strip().lower()


_RESULT_NUMBERS = ('42', '7', '15')

_FETCH_VERBS = frozenset((
    'get', 'gets', 'return', 'returns', 'fetch', 'fetches', 'retrieve', 'retrieves', 'find', 'finds', 'show',
    'shows', 'give', 'gives', 'provide', 'provides',
))  # fmt: skip
"""Leading verbs dropped so the rest reads as a noun phrase ("Get the weather of a city" -> "the weather of ...")."""
_ACTION_VERBS = frozenset((
    'add', 'adds', 'subtract', 'subtracts', 'multiply', 'multiplies', 'divide', 'divides', 'convert', 'converts',
    'calculate', 'calculates', 'compute', 'computes', 'count', 'counts', 'search', 'searches', 'look', 'looks',
    'lookup', 'translate', 'translates', 'send', 'sends', 'create', 'creates', 'delete', 'deletes', 'update',
    'updates', 'list', 'lists', 'check', 'checks', 'book', 'books', 'set', 'sets', 'sum', 'sums', 'round', 'rounds',
    'sort', 'sorts', 'reverse', 'reverses', 'summarise', 'summarises', 'summarize', 'summarizes', 'generate',
    'generates', 'validate', 'validates', 'parse', 'parses', 'format', 'formats', 'estimate', 'estimates',
    'resolve', 'resolves', 'query', 'queries',
))  # fmt: skip
"""Leading verbs that make a description an action: the question becomes "Can you <description>?"."""
_ARTICLES = frozenset(('a', 'an', 'the', 'some', 'one', 'given', 'any'))
_STOPWORDS = frozenset(('of', 'for', 'in', 'to', 'and', 'or', 'the', 'a', 'an', 'e', 'g', 'eg', 'name', 'value'))


def _keywords(name: str, schema: Mapping[str, Any]) -> set[str]:
    """Words naming a property: its name's words and its description's words (without filler)."""
    words = set(_humanise(name).split())
    description = schema.get('description')
    if isinstance(description, str):
        words |= {w for w in re.findall(r'[a-z]+', description.lower()) if w not in _STOPWORDS and len(w) > 1}
    return words


def _bare(word: str) -> str:
    return word.lower().strip(',;:()"\'')


def _phrase(definition: ToolDefinition, arguments: Mapping[str, Any]) -> tuple[str, bool]:
    """The description's first sentence with the argument values put in; ``(phrase, is_action)``.

    A value replaces ``a|an|the <word>`` (or ``a <word> <word>``) where a word names its property
    (``"Current weather of a city"`` + ``city='Paris'`` -> ``"the current weather of Paris"``); values
    that fit nowhere are appended (``"... for 10"``); values equal to the property's default are left out.
    """
    description = (definition.description or '').strip().split('\n')[0]
    description = re.split(r'(?<=[.!?])\s', description)[0].rstrip('.?!: ') or _humanise(definition.name)
    words = description.split()
    first = words[0].lower()
    action = first in _ACTION_VERBS
    if first in _FETCH_VERBS and len(words) > 1:
        words = words[1:]
    elif not words[0].isupper():
        words[0] = first
    properties = definition.input_schema.get('properties')
    properties = properties if isinstance(properties, Mapping) else {}
    unplaced: list[str] = []
    for name, value in arguments.items():
        if isinstance(value, (dict, list, bool)):
            continue
        prop = properties.get(name)
        prop = prop if isinstance(prop, Mapping) else {}
        if prop.get('default') is not None and value == prop.get('default'):
            continue  # a default the user would not mention
        keys = _keywords(str(name), prop)
        bare = [_bare(w) for w in words]
        spot = next(
            (
                (i, j)
                for i, word in enumerate(bare)
                if word in _ARTICLES
                for j in (i + 2, i + 1)
                if j < len(bare) and bare[j] in keys
            ),
            None,
        )
        if spot is None:
            unplaced.append(str(value))
        else:
            i, j = spot
            trailing = re.search(r'[,;:]*$', words[j])
            words[i : j + 1] = [str(value) + (trailing.group() if trailing else '')]
    phrase = ' '.join(words)
    if unplaced:
        phrase += ' for ' + ' and '.join(unplaced)
    if not action and words and _bare(words[0]) not in _ARTICLES:
        phrase = 'the ' + phrase
    return phrase, action


def synthesise_example(definition: ToolDefinition, variant: int = 0) -> ToolExample:
    """An example exchange for ``definition`` built from its name, description and input schema.

    The call uses a sample value for every property (enum -> first value, distinct values for
    properties sharing an enum, city-like strings ``'Paris'``/``'Tokyo'``/``'Berlin'`` by ``variant``,
    numbers ``10``/``3``/``25``, booleans ``true``). The question is phrased from the description with
    those values put in: ``"What is the current weather of Paris?"`` for a noun-phrase description
    (``"Current weather of a city."``, also ``"Get ..."``/``"Return ..."``), ``"Can you convert 10
    from km to mi?"`` for an action (``"Convert a value from km to mi."``). The result is a short
    sentence like real tools return (``"The current weather of Paris is 42."``, ``"The result is 42."``
    for actions; numbers ``42``/``7``/``15`` by ``variant``) and the answer restates it, which teaches
    the model to answer from the tool response whatever its shape (measured: sentences, numbers, JSON).
    """
    arguments = _sample_arguments(definition.input_schema, variant=variant)
    phrase, action = _phrase(definition, arguments)
    number = _RESULT_NUMBERS[variant % len(_RESULT_NUMBERS)]
    question = f'Can you {phrase}?' if action else f'What is {phrase}?'
    sentence = f'The result is {number}.' if action else f'{phrase[0].upper()}{phrase[1:]} is {number}.'
    return ToolExample(question, definition.name, arguments, sentence, sentence)


MIN_EXAMPLES = 2
"""Synthesised examples per request at least (one tool gets several variants); one alone rarely works."""


_WORD = re.compile(r'[a-z0-9]+')


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def _affinity(example: ToolExample, definition: ToolDefinition | None, question: str) -> int:
    wanted = _words(question)
    own = _words(example.question) | _words(_humanise(example.tool_name))
    if definition is not None:
        own |= _words(definition.description)
    return len(wanted & own)


def example_messages(
    definitions: Sequence[ToolDefinition], question: str, examples: Sequence[ToolExample] | None = None
) -> list[Message]:
    """The example exchanges to put before the conversation, as messages.

    Uses the caller's ``examples`` whose tool is among ``definitions`` (falling back to synthesised
    examples, at least :data:`MIN_EXAMPLES`, when none fits), ordered so the example closest to ``question`` comes last.
    Each exchange is four messages: user question, assistant call, tool response, assistant answer
    (ending in a newline, which teaches the model to stop there).
    """
    by_name = {d.name: d for d in definitions}
    chosen = [e for e in examples or () if e.tool_name in by_name]
    if not chosen and definitions:
        per_tool = -(-MIN_EXAMPLES // len(definitions))
        chosen = [synthesise_example(d, v) for v in range(per_tool) for d in definitions]
    indexed = sorted(
        enumerate(chosen), key=lambda ie: (_affinity(ie[1], by_name.get(ie[1].tool_name), question), ie[0])
    )
    messages: list[Message] = []
    for position, (_, example) in enumerate(indexed, start=1):
        call_id = f'example_{position}'
        arguments = orjson.dumps(dict(example.arguments)).decode()
        messages.append(UserMessage(example.question))
        messages.append(AssistantMessage(None, (ToolCall(call_id, 'function', example.tool_name, arguments),)))
        messages.append(ToolResponseMessage((ToolResponse(call_id, example.tool_name, example.result),)))
        messages.append(AssistantMessage(example.answer.rstrip('\n') + '\n'))
    return messages
