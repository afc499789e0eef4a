"""stream_entity(): the partial values equal validating each streamed prefix (core partial parser + pydantic)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel
from toolweave import ChatClient
from toolweave.chat import AssistantMessage, ChatResponse, Generation, Prompt, ToolCall, Usage
from toolweave.chat.stream import TOOL_CALL_DELTAS, ToolCallDelta
from toolweave.providers import ScriptedChatModel
from toolweave.structured import OutputType, StructuredOutputValidationError


class Line(BaseModel):
    item: str
    qty: int


class Order(BaseModel):
    customer: str
    lines: list[Line]
    note: str = ''


TEXT = (
    '{"customer": "Ada Lovelace", "lines": [{"item": "analytical engine", "qty": 1}, '
    '{"item": "punched cards", "qty": 250}, {"item": "brass gears", "qty": 12}], "note": "deliver to London"}'
)


def answer(text: str) -> ChatResponse:
    return ChatResponse((Generation(AssistantMessage(text), 'stop'),), usage=Usage(5, 5, 10))


def expected(chunks: list[str], output: OutputType[Any]) -> list[Any]:
    """Validate each prefix as stream_entity promises: new values only, the whole value last."""
    values: list[Any] = []
    for end in range(1, len(chunks) + 1):
        value = output.partial(''.join(chunks[:end]))
        if value is not None and (not values or value != values[-1]):
            values.append(value)
    final = output.validate(''.join(chunks))
    return values if values and values[-1] == final else [*values, final]


def streamed_texts(model: ScriptedChatModel) -> list[str]:
    async def run() -> list[str]:
        return [c.text async for c in model.stream(Prompt.of('x')) if c.text]

    return asyncio.run(run())


@pytest.mark.parametrize('parts', [1, 4, 12, 40])
def test_partials_equal_validating_each_prefix(parts: int) -> None:
    output = OutputType.of(Order)
    chunks = streamed_texts(ScriptedChatModel([answer(TEXT)], stream_parts=parts))
    model = ScriptedChatModel([answer(TEXT)], stream_parts=parts)
    values = list(ChatClient.create(model).prompt('Order?').stream_entity(Order))
    assert values == expected(chunks, output)
    assert values[-1] == Order.model_validate_json(TEXT)
    if parts >= 12:
        assert len(values) >= 3  # values arrive while the JSON does
        assert [len(v.lines) for v in values] == sorted(len(v.lines) for v in values)


def test_async_iteration_and_list_output() -> None:
    text = '{"result": [' + ', '.join(f'{{"item": "thing {i}", "qty": {i}}}' for i in range(8)) + ']}'
    model = ScriptedChatModel([answer(text)], stream_parts=16)

    async def run() -> list[Any]:
        return [v async for v in ChatClient.create(model).prompt('x').stream_entity(list[Line])]

    values = asyncio.run(run())
    chunks = streamed_texts(ScriptedChatModel([answer(text)], stream_parts=16))
    assert values == expected(chunks, OutputType.of(list[Line]))
    assert len(values) > 2 and values[-1][-1] == Line(item='thing 7', qty=7)


def test_output_tool_partials_follow_the_argument_fragments() -> None:
    fragments = [TEXT[i : i + 23] for i in range(0, len(TEXT), 23)]

    class ToolStream(ScriptedChatModel):
        async def stream(self, prompt: Prompt):  # type: ignore[override]
            self.prompts.append(prompt)
            deltas = [ToolCallDelta(0, 'call_1', 'final_result', '')] + [
                ToolCallDelta(0, None, None, f) for f in fragments
            ]
            for delta in deltas:
                yield ChatResponse((), metadata={TOOL_CALL_DELTAS: (delta,)})
            call = ToolCall('call_1', 'function', 'final_result', TEXT)
            yield ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),), usage=Usage(5, 5, 10))

    model = ToolStream([])
    values = list(ChatClient.create(model).prompt('Order?').stream_entity(Order, strategy='tool'))
    assert values == expected(fragments, OutputType.of(Order))
    assert len(values) >= 3


def test_a_failed_attempt_is_held_back_and_the_error_raised() -> None:
    model = ScriptedChatModel([answer('{"customer": "A"}')] * 3, stream_parts=3)
    spec = ChatClient.create(model).prompt('x')
    with pytest.raises(StructuredOutputValidationError) as info:
        list(spec.stream_entity(Order))
    assert info.value.attempts == 3 and info.value.errors == ['lines: Field required']
    assert info.value.usage is not None and info.value.usage.total_tokens == 30
