"""``text_chunk`` (one per streamed token of every HTTP provider) builds exactly the chunk it always built.

It now passes every field of the three dataclasses in order instead of keywords and default factories;
a hypothesis differential test against the former construction (kept here as the reference) requires
equal chunks (``None`` included) and fresh, unshared metadata dicts for any text, reasoning, id and model
values a payload can hold.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from toolweave.chat.messages import AssistantMessage
from toolweave.chat.response import ChatResponse, Generation
from toolweave.providers._base import text_chunk

json_values = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.lists(st.integers(), max_size=2)


def reference(text: Any, reasoning: Any, *, id: Any = None, model: Any = None) -> ChatResponse | None:
    """The construction ``text_chunk`` had before (keywords, default factories)."""
    message_metadata: dict[str, Any] = {}
    if isinstance(reasoning, str) and reasoning:
        message_metadata['reasoning'] = reasoning
    has_text = isinstance(text, str) and bool(text)
    if not has_text and 'reasoning' not in message_metadata:
        return None
    return ChatResponse(
        (Generation(AssistantMessage(text if has_text else None, (), message_metadata)),),
        id=id if isinstance(id, str) else None,
        model=model if isinstance(model, str) else None,
    )


@given(text=json_values, reasoning=json_values, id=json_values, model=json_values)
def test_text_chunk_equals_the_former_construction(text: Any, reasoning: Any, id: Any, model: Any) -> None:
    chunk = text_chunk(text, reasoning, id=id, model=model)
    assert chunk == reference(text, reasoning, id=id, model=model)
    if chunk is not None:
        other = text_chunk(text, reasoning, id=id, model=model)
        assert other is not None
        generation, again = chunk.generations[0], other.generations[0]
        assert generation.output.metadata is not again.output.metadata  # never a shared dict
        assert generation.metadata is not again.metadata and chunk.metadata is not other.metadata


def test_text_and_reasoning_chunk_values() -> None:
    chunk = text_chunk('Hi', 'think', id='c1', model='m')
    assert chunk is not None
    assert (chunk.text, chunk.id, chunk.model, chunk.usage) == ('Hi', 'c1', 'm', None)
    assert dict(chunk.generations[0].output.metadata) == {'reasoning': 'think'}
    assert chunk.generations[0].finish_reason is None
    assert text_chunk('', None) is None
    assert text_chunk(None, '') is None
