"""A failed tool call leaves no reference cycle behind: a service's garbage collector has nothing to find.

A cycle per failed call (an exception kept in a local of a frame its own traceback holds) is freed only by the
cyclic garbage collector: memory that grows between collections, and collections that ran in the middle of every
call (a raw-schema tool's invalid call cost about 15% more instructions, most of it in ``gc_collect_main``).
Each case runs with the collector off and counts what ``gc.collect()`` then finds unreachable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from support.garbage import collector_off
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Prompt,
    ToolCall,
    ToolCallingChatOptions,
    UserMessage,
)
from toolweave.tools import (
    DefaultToolCallingManager,
    FunctionToolCallback,
    MethodToolCallback,
    ToolCallback,
    ToolExecutionError,
)
from typing_extensions import TypedDict

ROUNDS = 20


class Item(pydantic.BaseModel):
    sku: str
    quantity: int


class ItemDict(TypedDict):
    sku: str
    quantity: int


def order_models(items: list[Item]) -> str:
    """Order items."""
    return 'ok'


def order_dicts(items: list[ItemDict]) -> str:
    """Order items."""
    return 'ok'


def fails(items: list[ItemDict]) -> str:
    """Always fails."""
    raise KeyError('no stock')


SCHEMA = {
    'type': 'object',
    'properties': {
        'items': {
            'type': 'array',
            'items': {
                'type': 'object',
                'properties': {'sku': {'type': 'string'}, 'quantity': {'type': 'integer'}},
                'required': ['sku', 'quantity'],
            },
        }
    },
    'required': ['items'],
    'additionalProperties': False,
}


def _tools() -> dict[str, ToolCallback]:
    return {
        'models': MethodToolCallback(order_models),
        'typed dicts': MethodToolCallback(order_dicts),
        'raw schema': FunctionToolCallback.builder('order_raw', lambda arguments: 'ok').input_schema(SCHEMA).build(),
        'raises': MethodToolCallback(fails),
    }


FAILED_INPUTS = {
    'a wrong value deep inside': '{"items": [{"sku": "a", "quantity": "one"}]}',
    'a wrong type': '{"items": 3}',
    'an unknown argument': '{"items": [], "zzz": 1}',
    'a missing argument': '{}',
    'not JSON': '{"items": [',
    'a number beyond 64 bits': '{"items": [{"sku": "a", "quantity": 1e400}]}',
}


def _failing_calls(tool: ToolCallback, text: str, call: Callable[[str], Any]) -> None:
    for _ in range(ROUNDS):
        with pytest.raises(ToolExecutionError):
            call(text)


@pytest.mark.parametrize('text', FAILED_INPUTS.values(), ids=FAILED_INPUTS.keys())
@pytest.mark.parametrize('shape', ['models', 'typed dicts', 'raw schema', 'raises'])
def test_a_failed_call_leaves_no_cycle(shape: str, text: str) -> None:
    tool = _tools()[shape]
    if shape == 'raises':
        text = '{"items": []}'
    with pytest.raises(ToolExecutionError):
        tool.call(text)  # the first call builds what later calls keep (validators, decoder)
    with collector_off() as found:
        _failing_calls(tool, text, tool.call)
    assert found == [0]


@pytest.mark.parametrize('shape', ['models', 'raw schema', 'raises'])
def test_a_failed_async_call_leaves_no_cycle(shape: str) -> None:
    tool = _tools()[shape]
    text = '{"items": []}' if shape == 'raises' else FAILED_INPUTS['a wrong value deep inside']

    async def calls() -> None:
        for _ in range(ROUNDS):
            with pytest.raises(ToolExecutionError):
                await tool.acall(text)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(calls())  # once outside: the loop's own first-use objects
        with collector_off() as found:
            loop.run_until_complete(calls())
    finally:
        loop.close()
    assert found == [0]


@pytest.mark.parametrize('mode', ['blocking', 'async'])
def test_the_manager_turns_failures_into_text_without_cycles(mode: str) -> None:
    """The path a loop runs: each failed call's error becomes the tool response text for the model (the manager
    kept the error in a local of the frame its traceback holds)."""
    tools = list(_tools().values())
    arguments = [FAILED_INPUTS['a wrong value deep inside']] * 3 + ['{"items": []}']  # the last one raises
    calls = tuple(
        ToolCall(f'c{n}', 'function', tool.tool_definition.name, text)
        for n, (tool, text) in enumerate(zip(tools, arguments, strict=True))
    )
    prompt = Prompt((UserMessage('order'),), ToolCallingChatOptions(tool_callbacks=tuple(tools)))
    response = ChatResponse((Generation(AssistantMessage(None, calls), 'tool_calls'),))
    manager = DefaultToolCallingManager()
    loop = asyncio.new_event_loop()

    def execute() -> Any:
        if mode == 'async':
            return loop.run_until_complete(manager.aexecute_tool_calls(prompt, response))
        return manager.execute_tool_calls(prompt, response)

    try:
        texts = [r.response_data for r in execute().conversation_history[-1].responses]
        with collector_off() as found:
            for _ in range(ROUNDS):
                execute()
    finally:
        loop.close()
    assert [t.split(':')[0] for t in texts] == [
        *(f"Invalid arguments for tool '{tool.tool_definition.name}'" for tool in tools[:3]),
        'KeyError',
    ]
    assert found == [0]
