r"""How :class:`~toolweave.providers.local.LocalChatModel` talks to a *base* 270M model.

The Gemma 3 270M shipped on PyPI is the pretrained model, not the instruction-tuned one: it has no
chat template and no notion of tools. What it may write each round is fixed by a grammar
(:mod:`toolweave.providers._local_grammar`); this module gives it the context:

1. :data:`HERMES_GEMMA_TEMPLATE`: Gemma turns, calls written as ``<tool_call>{"name": ...,
   "arguments": {...}}</tool_call>`` and results as ``<tool_response>...</tool_response>``.
2. :func:`tools_message`: the tool listing, sent as the first message of every round (the tools are
   not sent as OpenAI ``tools``: llama.cpp refuses a grammar next to them).
3. :func:`example_messages`: the caller's :class:`ToolExample` exchanges, if any (none are synthesised:
   the grammar makes calls well formed, and invented values would leak into answers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from toolweave.chat.messages import AssistantMessage, Message, ToolCall, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.tools.definition import ToolDefinition

__all__ = ['HERMES_GEMMA_TEMPLATE', 'ToolExample', 'example_messages', 'tools_message']

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


def tools_message(definitions: Sequence[ToolDefinition]) -> str:
    """The tool listing put first in every round (as :data:`HERMES_GEMMA_TEMPLATE` would render ``tools``)."""
    listed = '\n'.join(
        orjson.dumps({'name': d.name, 'description': d.description, 'parameters': d.input_schema}).decode()
        for d in definitions
    )
    return (
        f'You have access to these tools:\n<tools>\n{listed}\n</tools>\n'
        'To call a tool, reply with <tool_call>{"name": "<tool name>", "arguments": {<arguments>}}</tool_call>. '
        'Tool results come back inside <tool_response></tool_response>; then answer in one short sentence.'
    )


def example_messages(
    definitions: Sequence[ToolDefinition], examples: Sequence[ToolExample] | None = None
) -> list[Message]:
    """The example exchanges to put before the conversation, as messages.

    The caller's ``examples`` whose tool is among ``definitions``, in their order; none are
    synthesised (the grammar makes the calls well formed, and an invented example's values would
    leak into answers). The examples do not depend on the question, so the prompt's prefix stays the
    same from turn to turn (llama.cpp reuses its cache). Each exchange is four messages: user
    question, assistant call, tool response, assistant answer.
    """
    names = {d.name for d in definitions}
    chosen = [e for e in examples or () if e.tool_name in names]
    messages: list[Message] = []
    for position, example in enumerate(chosen, start=1):
        call_id = f'example_{position}'
        arguments = orjson.dumps(dict(example.arguments)).decode()
        messages.append(UserMessage(example.question))
        messages.append(AssistantMessage(None, (ToolCall(call_id, 'function', example.tool_name, arguments),)))
        messages.append(ToolResponseMessage((ToolResponse(call_id, example.tool_name, example.result),)))
        messages.append(AssistantMessage(example.answer))
    return messages
