"""Lenient mode's objects back to back (the pure ``json::modes`` order in Rust): merged, or refused when they clash.

The Rust core merges the repaired objects as text (the members of each in turn) after checking the
values of repeated keys on jiter values; the twin merges dicts. Both must give the same dict, in
the same key order, and the same error at the same position.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import toolweave._core as rust
import toolweave._reference as reference
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave.exceptions import ToolArgumentsError

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, -0.0, 0.5, 1e300]), st.sampled_from(['a', 'é'])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from('xy'), inner, max_size=2),
    max_leaves=6,
)
OBJECTS = st.dictionaries(st.sampled_from(['a', 'b', 'c', 'é']), VALUES, max_size=3)


def outcome(core: Any, text: str, max_depth: int = 200) -> tuple[str, Any]:
    try:
        result = core.parse_arguments(text, 'lenient', max_depth=max_depth)
        return 'ok', (result, list(result))
    except ToolArgumentsError as exc:
        return 'error', (str(exc), exc.position)


@settings(max_examples=300, deadline=None)
@given(
    objects=st.lists(OBJECTS, min_size=2, max_size=4),
    separator=st.sampled_from(['', ' ', ',', ', ', '\n']),
    max_depth=st.sampled_from([1, 2, 200]),
)
def test_back_to_back_objects_rust_equals_twin(objects: list[dict[str, Any]], separator: str, max_depth: int) -> None:
    text = separator.join(json.dumps(o, ensure_ascii=False) for o in objects)
    assert outcome(rust, text, max_depth) == outcome(reference, text, max_depth)


@pytest.mark.parametrize('core', [rust, reference], ids=['rust', 'twin'])
def test_repeated_keys_with_equal_values_merge_in_first_seen_order(core: Any) -> None:
    merged = core.parse_arguments('{"b": {"x": [1, 2]}, "a": 1}{"c": null, "b": {"x": [1, 2]}}{}', 'lenient')
    assert merged == {'b': {'x': [1, 2]}, 'a': 1, 'c': None}
    assert list(merged) == ['b', 'a', 'c']


@pytest.mark.parametrize('core', [rust, reference], ids=['rust', 'twin'])
@pytest.mark.parametrize(
    ('later', 'keys'), [('{"a": 1.0}', '"a"'), ('{"b": true, "a": 2}', '"a"'), ('{"a": [1]}', '"a"')]
)
def test_typed_clash_is_refused_at_the_later_object(core: Any, later: str, keys: str) -> None:
    text = '{"a": 1, "b": true} ' + later
    with pytest.raises(ToolArgumentsError) as info:
        core.parse_arguments(text, 'lenient')
    assert info.value.position == len('{"a": 1, "b": true} ')
    assert f'JSON objects back to back give different values for {keys}: merging them would lose one' in str(info.value)
