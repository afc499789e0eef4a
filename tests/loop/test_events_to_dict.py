"""``event_to_dict`` gives exactly what the field-by-field conversion gave, for every event kind and value.

The conversion looks each class's field names up once and passes plain values (text, numbers, live
``partial`` dicts) through without the per-value type checks; ``reference`` below is the conversion as it
was (``dataclasses.fields`` and ``_plain`` on every value). A hypothesis differential test holds the two
equal (values and types) for every event class, a subclass with a field of its own, and odd values.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from toolweave.approvals import PendingToolCall
from toolweave.chat.messages import AssistantMessage, ToolCall
from toolweave.chat.response import ChatResponse, Generation, Usage
from toolweave.events import (
    ApprovalRequested,
    ReasoningDelta,
    RoundFinished,
    RoundStarted,
    RunFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallReady,
    ToolCallStarted,
    ToolExecutionStarted,
    ToolResult,
    _plain,
    event_to_dict,
)


def reference(event: Any) -> dict[str, Any]:
    data: dict[str, Any] = {'kind': event.kind}
    for field in dataclasses.fields(event):
        data[field.name] = _plain(getattr(event, field.name))
    return data


@dataclasses.dataclass(frozen=True)
class LabelledDelta(TextDelta):
    """A user's subclass with a field of its own."""

    kind = 'labelled_delta'
    label: Any = None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
odd = json_values | st.tuples(json_values, json_values) | st.builds(Usage, st.integers(0, 9), st.integers(0, 9))
calls = st.builds(ToolCall, st.text(max_size=6), st.just('function'), st.text(max_size=6), st.text(max_size=12))
usages = st.none() | st.builds(Usage, st.integers(0, 99), st.integers(0, 99), st.integers(0, 99))
responses = st.builds(
    lambda text, reason: ChatResponse((Generation(AssistantMessage(text), finish_reason=reason),)),
    st.text(max_size=8),
    st.none() | st.sampled_from(['stop', 'tool_calls']),
) | st.just(ChatResponse())
pending = st.builds(PendingToolCall, st.text(max_size=4), st.text(max_size=4), json_values, st.text(max_size=6))
rounds = st.integers(1, 5)
events = st.one_of(
    st.builds(RoundStarted, rounds),
    st.builds(TextDelta, rounds, st.text()),
    st.builds(ReasoningDelta, rounds, st.text()),
    st.builds(ToolCallStarted, rounds, st.integers(0, 3), st.text(max_size=6), st.text(max_size=6)),
    st.builds(ToolCallArgumentsDelta, rounds, st.integers(0, 3), st.text(max_size=6), json_values),
    st.builds(ToolCallReady, rounds, st.integers(0, 3), calls, json_values),
    st.builds(RoundFinished, rounds, st.none() | st.text(max_size=6), usages),
    st.builds(ToolExecutionStarted, rounds, calls),
    st.builds(
        ToolResult,
        rounds,
        st.text(max_size=4),
        st.text(max_size=4),
        st.text(),
        st.booleans(),
        st.none() | st.text(max_size=6),
        st.floats(0, 9),
    ),
    st.builds(RunFinished, rounds, responses, usages),
    st.builds(lambda r, c: ApprovalRequested(r, tuple(c), None), rounds, st.lists(pending, max_size=3)),  # type: ignore[arg-type]
    st.builds(LabelledDelta, rounds, st.text(max_size=6), odd),
)


@given(st.lists(events, min_size=1, max_size=6))
def test_event_to_dict_equals_the_field_by_field_conversion(batch: list[Any]) -> None:
    for event in batch:
        got, expected = event_to_dict(event), reference(event)
        assert got == expected
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]
        assert list(got) == list(expected)


def test_a_live_partial_is_passed_through_not_copied() -> None:
    partial = {'city': 'Par'}
    assert event_to_dict(ToolCallArgumentsDelta(1, 0, '"Par', partial))['partial'] is partial
    assert event_to_dict(TextDelta(2, 'Hi')) == {'kind': 'text_delta', 'round': 2, 'text': 'Hi'}
    assert event_to_dict(LabelledDelta(1, 'x', (1, 2))) == {
        'kind': 'labelled_delta',
        'round': 1,
        'text': 'x',
        'label': [1, 2],
    }
