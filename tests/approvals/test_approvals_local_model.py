"""The embedded local model end to end with one approval: it calls a guarded tool, the run pauses, is approved, ends.

The model is a 270M base model: the test asserts structure (the call waited, ran once after the
approval with the model's arguments, the run ended with an answer and the usage summed), never wording.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from support.local_model import needs_local
from toolweave import ChatClient, ToolParam, tool
from toolweave.approvals import Approve
from toolweave.providers import LocalChatModel, ToolExample
from toolweave.runstate import RunState

pytestmark = [
    pytest.mark.local_model,
    needs_local,
]

RAN: list[dict[str, Any]] = []


@tool(description='Book a table at a restaurant', requires_approval=True)
def book_table(
    restaurant: Annotated[str, ToolParam(description='Restaurant name')],
    people: Annotated[int, ToolParam(description='Number of people')],
) -> str:
    RAN.append({'restaurant': restaurant, 'people': people})
    return f'Booked a table for {people} at {restaurant}.'


EXAMPLES = (
    ToolExample('Book a table for 2 at Chez Paul.', 'book_table', {'restaurant': 'Chez Paul', 'people': 2},
                'Booked a table for 2 at Chez Paul.', 'Your table for 2 at Chez Paul is booked.'),
)  # fmt: skip


@pytest.fixture(scope='module')
def local_model() -> Iterator[LocalChatModel]:
    with LocalChatModel(examples=EXAMPLES, max_tokens=96) as model:
        yield model


def test_one_approval_end_to_end(local_model: LocalChatModel) -> None:
    RAN.clear()
    client = ChatClient.builder(local_model).build()
    response = client.prompt('Book a table for 4 at Luigi.').tools(book_table).call()

    assert response.is_paused(), response.content()
    assert RAN == []  # nothing booked before the approval
    pending = response.pending_tool_calls()
    assert [p.name for p in pending] == ['book_table']
    arguments = pending[0].arguments
    assert isinstance(arguments, dict) and set(arguments) == {'restaurant', 'people'}
    state = response.run_state()
    assert state is not None and state.usage is not None and state.rounds == 1

    resumed = client.resume(RunState.from_json(state.to_json()), {pending[0].id: Approve()}).tools(book_table).call()
    assert not resumed.is_paused()
    assert RAN == [{'restaurant': arguments['restaurant'], 'people': arguments['people']}]  # ran once, as asked
    assert resumed.content().strip()
    final = resumed.chat_response()
    assert final.metadata['toolCallingRounds'] == 2
    assert final.usage is not None and final.usage.total_tokens > state.usage.total_tokens  # summed across the pause
