"""UsageAccumulator: sums, None/strings, type errors, and Rust vs reference."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from core_fixtures import IMPLEMENTATIONS, load_case, load_stream
from hypothesis import given, settings
from hypothesis import strategies as st


def test_rounds_summed_once(core: SimpleNamespace) -> None:
    """Case B22: two streamed rounds; reasoning tokens are counted once per round."""
    case = load_case('B22')
    acc = core.UsageAccumulator()
    for r in case['input']['rounds']:
        acc.add(r['usage'])
    want = case['expected']
    assert acc.total() == {k: want[k] for k in ('input_tokens', 'output_tokens', 'reasoning_tokens')}
    assert acc.rounds == want['requests'] == 2


def test_stream_usage_added_once_per_round(core: SimpleNamespace) -> None:
    """Case B24's fix at this level: one usage per round (the stream's last one), not one per chunk."""
    case = load_case('B24')
    acc = core.UsageAccumulator()
    acc.add(case['input'][-1]['usageMetadata'])
    assert acc.total() == {'promptTokenCount': 36, 'candidatesTokenCount': 32, 'totalTokenCount': 68}


def test_nested_details_from_corpus(core: SimpleNamespace) -> None:
    usages = []
    for name in ('001-openai-chat-parallel-empty-args', '002-openai-chat-single-call-usage-chunk'):
        _, expected = load_stream(name)
        usages.append(expected['usage'])
    acc = core.UsageAccumulator()
    assert acc.total() is None and acc.rounds == 0
    for u in usages:
        acc.add(u)
    total = acc.total()
    assert total == {
        'prompt_tokens': 364 + 423,
        'completion_tokens': 40 + 15,
        'total_tokens': 404 + 438,
        'prompt_tokens_details': {'cached_tokens': 0, 'audio_tokens': 0},
        'completion_tokens_details': {
            'reasoning_tokens': 0,
            'audio_tokens': 0,
            'accepted_prediction_tokens': 0,
            'rejected_prediction_tokens': 0,
        },
    }
    assert list(total) == list(usages[0])
    total['prompt_tokens'] = -1  # total() hands out a copy
    assert acc.total()['prompt_tokens'] == 787


def test_none_strings_floats(core: SimpleNamespace) -> None:
    acc = core.UsageAccumulator()
    acc.add(None)
    assert acc.total() is None and acc.rounds == 0
    acc.add({'a': None, 'b': 1, 'unit': 'tokens', 'cost': 0.25, 'd': None})
    acc.add({'a': None, 'b': 2.5, 'unit': 'tok', 'cost': 1, 'd': {'x': 1}})
    acc.add({'a': 3, 'b': None})
    assert acc.total() == {'a': 3, 'b': 3.5, 'unit': 'tok', 'cost': 1.25, 'd': {'x': 1}}
    assert type(acc.total()['a']) is int
    assert acc.rounds == 3
    acc.add({})
    assert acc.rounds == 4
    acc.reset()
    assert acc.total() is None and acc.rounds == 0
    acc.add({})
    assert acc.total() == {}


def test_mappings_accepted(core: SimpleNamespace) -> None:
    acc = core.UsageAccumulator()
    acc.add(MappingProxyType({'a': 1, 'd': OrderedDict(x=2)}))
    acc.add(OrderedDict(a=1))
    assert acc.total() == {'a': 2, 'd': {'x': 2}}


@pytest.mark.parametrize(
    ('usage', 'message'),
    [
        ({'a': [1]}, "usage value at 'a' must be a number, string, mapping or None, got list"),
        ({'a': {'b': True}}, "usage value at 'a.b' must be a number, string, mapping or None, got bool"),
        ({'a': {'b': 2**70}}, "usage value at 'a.b' is out of the 64-bit integer range"),
        ({1: 2}, 'usage keys must be strings, got int at the top level'),
        ({'a': {2: 2}}, "usage keys must be strings, got int at 'a'"),
        ({'d': 5}, "usage value at 'd' mixes a mapping and a number across rounds"),
        ({'n': {'x': 1}}, "usage value at 'n' mixes a number and a mapping across rounds"),
        ([('a', 1)], 'usage must be a mapping or None, got list'),
    ],
)
def test_type_errors_are_atomic(core: SimpleNamespace, usage: Any, message: str) -> None:
    acc = core.UsageAccumulator()
    acc.add({'n': 1, 'd': {'x': 1}})
    with pytest.raises(TypeError) as info:
        acc.add(usage)
    assert str(info.value) == message
    assert acc.total() == {'n': 1, 'd': {'x': 1}}
    assert acc.rounds == 1


leaves = st.none() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False, width=32) | st.sampled_from(['a', 'b'])
usage_maps = st.recursive(
    st.dictionaries(st.sampled_from(['p', 'c', 't', 'x']), leaves, max_size=4),
    lambda children: st.dictionaries(st.sampled_from(['p', 'c', 'd', 'e']), leaves | children, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(rounds=st.lists(st.none() | usage_maps, max_size=6))
def test_differential(rounds: list[Any]) -> None:
    accs = {name: impl.UsageAccumulator() for name, impl in IMPLEMENTATIONS.items()}
    for usage in rounds:
        outcomes = {}
        for name, acc in accs.items():
            try:
                acc.add(usage)
                outcomes[name] = None
            except TypeError as exc:
                outcomes[name] = str(exc)
        assert outcomes['rust'] == outcomes['reference']
        assert accs['rust'].total() == accs['reference'].total()
        assert accs['rust'].rounds == accs['reference'].rounds
