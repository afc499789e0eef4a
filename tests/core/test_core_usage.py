"""UsageAccumulator: sums, None/strings, type errors, and Rust vs reference."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.core_fixtures import IMPLEMENTATIONS, load_case, load_stream


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


def nested(depth: int) -> dict[str, Any]:
    """A usage object of ``depth`` mapping levels (the top level counts): {'k': {'k': ... {'n': 1}}}."""
    usage: dict[str, Any] = {'n': 1}
    for _ in range(depth - 1):
        usage = {'k': usage}
    return usage


def test_depth_limit(core: SimpleNamespace) -> None:
    """Repro r1: a self-referencing dict or ~12,000 nested dicts segfaulted Rust (the twin raised
    RecursionError). Mappings may nest 32 levels; deeper is a TypeError naming the key path."""
    acc = core.UsageAccumulator()
    acc.add(nested(32))
    acc.add(nested(32))
    assert acc.rounds == 2
    total = acc.total()
    for _ in range(31):
        total = total['k']
    assert total == {'n': 2}
    too_deep = "usage value at '" + '.'.join(['k'] * 32) + "' nests mappings deeper than 32 levels"
    for usage in (nested(33), nested(12_000)):
        with pytest.raises(TypeError) as info:
            acc.add(usage)
        assert str(info.value) == too_deep
    loop: dict[str, Any] = {'a': 1}
    loop['self'] = loop
    with pytest.raises(TypeError) as info:
        acc.add(loop)
    assert str(info.value) == "usage value at '" + '.'.join(['self'] * 32) + "' nests mappings deeper than 32 levels"
    assert acc.rounds == 2


@pytest.mark.parametrize(
    ('usage', 'message'),
    [
        ({'a': '\udc00'}, "usage value at 'a' is a string with a lone surrogate"),
        ({'d': {'s': 'x\ud800y'}}, "usage value at 'd.s' is a string with a lone surrogate"),
        ({'\udc00': 1}, 'usage keys must be valid Unicode, got a lone surrogate at the top level'),
        ({'d': {'\ud800': 1}}, "usage keys must be valid Unicode, got a lone surrogate at 'd'"),
    ],
)
def test_lone_surrogates_rejected(core: SimpleNamespace, usage: Any, message: str) -> None:
    """Repro r5: Rust raised UnicodeEncodeError, the twin accepted; now both raise TypeError."""
    acc = core.UsageAccumulator()
    with pytest.raises(TypeError) as info:
        acc.add(usage)
    assert str(info.value) == message
    assert acc.total() is None and acc.rounds == 0


class ItemsMapping(Mapping[str, Any]):
    """A Mapping whose items() is given explicitly (may repeat keys) and may run a callback."""

    def __init__(self, items: list[tuple[str, Any]], on_items: Any = None) -> None:
        self._items = items
        self._on_items = on_items

    def __getitem__(self, key: str) -> Any:
        return dict(self._items)[key]

    def __len__(self) -> int:
        return len(dict(self._items))

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._items))

    def items(self) -> Any:
        if self._on_items is not None:
            self._on_items()
        return list(self._items)


def test_repeated_keys_keep_the_last_value(core: SimpleNamespace) -> None:
    """Repro r5: a Mapping whose items() repeats a key: Rust summed, the twin kept the last."""
    acc = core.UsageAccumulator()
    acc.add(ItemsMapping([('a', 1), ('b', {'x': 1}), ('a', 2), ('b', {'y': 5})]))
    acc.add({'a': 10})
    assert acc.total() == {'a': 12, 'b': {'y': 5}}

    class Dict(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            return [('a', 1), ('a', 7)]

    acc = core.UsageAccumulator()
    acc.add(Dict(ignored=1))
    assert acc.total() == {'a': 7}


def test_many_keys(core: SimpleNamespace) -> None:
    usage = {f'k{i}': i for i in range(50_000)}
    acc = core.UsageAccumulator()
    acc.add(usage)
    acc.add(usage | {'new': 1})
    total = acc.total()
    assert total is not None and len(total) == 50_001 and total['k49999'] == 2 * 49_999


def test_add_from_inside_items(core: SimpleNamespace) -> None:
    """Repro r5: a re-entrant add() from a mapping's items() raised 'Already borrowed' in Rust.
    The usage object is read before the total is touched, so the inner round simply counts first."""
    acc = core.UsageAccumulator()
    acc.add(ItemsMapping([('a', 1)], on_items=lambda: acc.add({'a': 100, 'b': 1})))
    assert acc.total() == {'a': 101, 'b': 1}
    assert acc.rounds == 2


def test_subclass_values_count_by_value(core: SimpleNamespace) -> None:
    class Int(int):
        def __int__(self) -> int:
            return 0

    class Str(str):
        def __str__(self) -> str:
            return 'other'

    class Float(float):
        def __float__(self) -> float:
            return 0.0

    acc = core.UsageAccumulator()
    acc.add({Str('k'): Int(5), 's': Str('v'), 'f': Float(1.5)})
    assert acc.total() == {'k': 5, 's': 'v', 'f': 1.5}
    assert [type(v) for v in acc.total().values()] == [int, str, float]


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
