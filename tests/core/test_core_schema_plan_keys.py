"""The accept plan finds dict members by their key object's identity and answers exactly as before (issue 14).

``SchemaValidator`` puts its plan's property names and ``enum``/``const`` strings in the parser's string cache,
so a parse hands out those very interned ``str`` objects: a member's dict lookup hits by pointer (no text
comparison, no hashing on insert) and an ``enum`` string matches by identity. Anything else (a key evicted from
the cache by a colliding string, an escaped, long, one-byte or non-ASCII key, keys out of schema order, a dict
Python built, other threads holding the cache) still finds the member by its text. Hypothesis compares
``validate_json`` with ``_validate_json_crate`` (the crate alone), and the plan's verdict on the parsed dict with
its verdict on the same members under fresh key and string objects, in reversed order and as ``json.loads``
builds them.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from collections import defaultdict
from typing import Any

import hypothesis.strategies as st
import toolweave._core as rust_core
from hypothesis import given, settings
from support.concurrency import run_threads
from toolweave.exceptions import SchemaValidationError, ToolArgumentsError

_MASK = (1 << 64) - 1


def _slot(text: str) -> int:
    """The string cache's slot of ``text`` (rust/py/json.rs ``StrCache::slot``), to build colliding keys."""
    b = text.encode()
    n = len(b)
    le = lambda x: int.from_bytes(x, 'little')
    if n >= 8:
        lo, hi = le(b[:8]), le(b[n - 8 :])
    elif n >= 4:
        lo, hi = le(b[:4]), le(b[n - 4 :])
    else:
        lo, hi = b[0] | b[n // 2] << 8, b[n - 1]
    h = (((lo ^ n) * 0x9E3779B97F4A7C15) & _MASK) ^ ((hi * 0x517CC1B727220A95) & _MASK)
    return h >> 52


def _colliding(prefix: str, count: int) -> list[list[str]]:
    """``count`` groups of two or more names sharing a cache slot."""
    slots: dict[int, list[str]] = defaultdict(list)
    for i in range(5000):
        slots[_slot(f'{prefix}{i}')].append(f'{prefix}{i}')
    return [names for names in slots.values() if len(names) > 1][:count]


_GROUPS = _colliding('key', 3)
_NAMES = [
    *(name for group in _GROUPS for name in group[:2]),
    'a',  # one byte: never cached
    'city',
    'zip_code',
    'é',
    'ünïcödé-näme',
    '名前',
    'q"uote',
    'back\\slash',
    'x' * 63,  # the longest cached key
    'y' * 64,  # too long to cache
    'emoji-\U0001f600',
]
_VALUE_SCHEMAS: list[Any] = [
    {},
    True,
    False,
    {'type': 'string'},
    {'type': 'integer', 'minimum': 0},
    {'enum': ['city', 'key0', 'a', 'é', 'alpha']},
    {'type': 'object', 'properties': {'city': {'type': 'string'}, 'a': {'type': 'integer'}}, 'required': ['city']},
    {'type': 'array', 'items': {'enum': ['alpha', 'gamma']}},
    {'anyOf': [{'type': 'string'}, {'type': 'null'}]},
]
_values = st.one_of(
    st.sampled_from(['alpha', 'gamma', 'city', 'key0', 'é', 'a', '', 'other', *_NAMES[:4]]),
    st.integers(-2, 3),
    st.none(),
    st.lists(st.sampled_from(['alpha', 'gamma', 'beta']), max_size=3),
    st.fixed_dictionaries({'city': st.sampled_from(['Oslo', 1])}, optional={'a': st.integers(0, 2), 'b': st.none()}),
)


@st.composite
def _schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=8, unique=True))
    schema: dict[str, Any] = {
        'type': 'object',
        'properties': {name: draw(st.sampled_from(_VALUE_SCHEMAS)) for name in names},
    }
    required = draw(st.lists(st.sampled_from([*names, 'absent']), max_size=3, unique=True))
    if required:
        schema['required'] = required
    additional = draw(st.sampled_from(['absent', False, True, {'type': 'integer'}]))
    if additional != 'absent':
        schema['additionalProperties'] = additional
    return schema


def _escaped(name: str) -> str:
    """``name`` as a JSON string whose every character is a ``\\u`` escape (surrogate pairs above the BMP)."""
    units = name.encode('utf-16-le')
    return '"' + ''.join(f'\\u{int.from_bytes(units[i : i + 2], "little"):04x}' for i in range(0, len(units), 2)) + '"'


@st.composite
def _texts(draw: st.DrawFn, schema: dict[str, Any]) -> str:
    names = list(schema['properties'])
    keys = draw(st.lists(st.sampled_from([*names, *_NAMES, 'extra']), max_size=8, unique=True))
    if draw(st.booleans()):
        keys = [name for name in names if name in keys] + [k for k in keys if k not in names]  # schema order
    members = []
    for key in keys:
        text_key = _escaped(key) if draw(st.integers(0, 4)) == 0 else json.dumps(key, ensure_ascii=draw(st.booleans()))
        members.append(f'{text_key}: {json.dumps(draw(_values))}')
    return '{' + ', '.join(members) + '}'


def _answer(call: Any, text: str) -> tuple[str, Any]:
    try:
        return 'ok', json.dumps(call(text, int64=True))
    except SchemaValidationError as exc:
        return 'SchemaValidationError', (str(exc), exc.errors)
    except (ToolArgumentsError, ValueError) as exc:
        return type(exc).__name__, str(exc)


def _fresh(value: Any, reverse: bool = False) -> Any:
    """``value`` with new ``str`` objects for every key and string (equal text, other identity)."""
    if isinstance(value, dict):
        items = [(''.join(list(k)) + '', _fresh(v, reverse)) for k, v in value.items()]
        return dict(reversed(items) if reverse else items)
    if isinstance(value, list):
        return [_fresh(v, reverse) for v in value]
    if isinstance(value, str):
        return value.encode().decode()
    return value


def _check(v: Any, text: str) -> None:
    planned = _answer(v.validate_json, text)
    assert planned == _answer(v._validate_json_crate, text)
    parsed = rust_core.parse_arguments(text)
    verdict = v._plan_verdict(parsed)
    assert verdict == v._plan_verdict(_fresh(parsed)), 'identity found a member text did not'
    assert verdict == v._plan_verdict(_fresh(parsed, reverse=True))
    assert verdict == v._plan_verdict(json.loads(text))
    if verdict == 'accept':
        assert planned[0] == 'ok'
    elif verdict == 'reject':
        assert planned[0] == 'SchemaValidationError'


def test_a_compiled_plan_puts_its_names_in_the_parse_cache():
    """After the plan compiles, a parse hands out the plan's interned name and ``enum`` objects (the same as
    ``sys.intern``), not new strings."""
    v = rust_core.SchemaValidator({'properties': {'shipping_city': {'enum': ['Reykjavik']}}})
    assert v._plan_verdict({}) == 'accept'
    parsed = rust_core.parse_arguments('{"shipping_city": "Reykjavik"}')
    ((key, value),) = parsed.items()
    assert key is sys.intern('shipping_city')
    assert value is sys.intern('Reykjavik')


def test_colliding_names_really_evict_each_other():
    """The names the tests use do share cache slots: a parse of one evicts the other's object."""
    first, second = _GROUPS[0][:2]
    rust_core.SchemaValidator({'properties': {first: {}}})._plan_verdict({})  # seeds ``first``
    a = next(iter(rust_core.parse_arguments(json.dumps({first: 1}))))
    b = next(iter(rust_core.parse_arguments(json.dumps({first: 1}))))
    assert a is b
    rust_core.parse_arguments(json.dumps({second: 1}))
    c = next(iter(rust_core.parse_arguments(json.dumps({first: 1}))))
    assert c == a and c is not a


@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_key_identity_walk_answers_as_the_lookup_and_the_crate(data):
    schema = data.draw(_schemas())
    v = rust_core.SchemaValidator(schema)
    for _ in range(data.draw(st.integers(1, 3))):
        text = data.draw(_texts(schema))
        _check(v, text)
    if data.draw(st.booleans()):  # another plan's names and colliding strings take the slots, then again
        other = rust_core.SchemaValidator(data.draw(_schemas()))
        _answer(other.validate_json, json.dumps({name: 'x' for group in _GROUPS for name in group}))
        _check(v, text)


def test_keys_out_of_schema_order_and_nested_misorder_stay_linear():
    """Dicts whose keys are out of schema order at every level, 150 deep: answered, and as the crate answers."""
    schema: dict[str, Any] = {'$ref': '#/$defs/N', '$defs': {}}
    schema['$defs']['N'] = {
        'type': 'object',
        'properties': {'first': {'$ref': '#/$defs/N'}, 'second': {'$ref': '#/$defs/N'}},
        'additionalProperties': False,
    }
    v = rust_core.SchemaValidator(schema)
    text = '{}'
    for _ in range(150):
        text = '{"second": {}, "first": ' + text + '}'
    assert v._plan_verdict(rust_core.parse_arguments(text)) == 'accept'
    _check(v, text)
    bad = text.replace('{}', '{"third": 1}', 1)
    assert v._plan_verdict(rust_core.parse_arguments(bad)) == 'reject'
    _check(v, bad)


def test_many_threads_with_different_schemas_get_the_single_thread_answers():
    """Threads parse and validate at once against their own schemas: the cache (held by one parse, skipped by the
    others) and its seeding never change an answer."""
    rng = random.Random(14)
    cases = []
    for t in range(8):
        names = rng.sample(_NAMES, 5)
        schema = {
            'type': 'object',
            'properties': {name: rng.choice(_VALUE_SCHEMAS) for name in names},
            'required': names[:2],
            'additionalProperties': t % 2 == 0,
        }
        v = rust_core.SchemaValidator(schema)
        texts = []
        for _ in range(6):
            keys = rng.sample([*names, *_NAMES], 6)
            texts.append(json.dumps({k: rng.choice(['alpha', 'city', 1, None, ['gamma']]) for k in keys}))
        cases.append((v, [(text, _answer(v._validate_json_crate, text)) for text in texts]))
    failures: list[str] = []

    def run(v: Any, expected: list[tuple[str, Any]]) -> None:
        for _ in range(300):
            for text, answer in expected:
                if _answer(v.validate_json, text) != answer:
                    failures.append(text)

    threads = [threading.Thread(target=run, args=case) for case in cases]
    run_threads(threads)
    assert failures == []


def test_an_enum_member_is_accepted_by_identity_or_text():
    """A parsed string is the plan's own ``enum`` object (accepted by identity), or equal text (escaped, too long
    to cache, a fresh object): the same verdict."""
    items = {'type': 'array', 'items': {'enum': ['alpha', 'gamma', 'é', 'z' * 70, 'b']}}
    v = rust_core.SchemaValidator({'type': 'object', 'properties': {'v': items}})
    for values in [['alpha', 'gamma', 'é', 'b'], ['z' * 70]]:
        text = json.dumps({'v': values}, ensure_ascii=False)
        assert v._plan_verdict(rust_core.parse_arguments(text)) == 'accept'
        _check(v, text)
    _check(v, '{"v": ["\\u0061lpha", "\\u00e9"]}')
    fresh = 'al' + str(len('ph')).replace('2', 'pha')  # equal to 'alpha', another object
    assert fresh == 'alpha' and fresh is not sys.intern('alpha')
    assert v._plan_verdict({'v': [fresh]}) == 'accept'
    assert v._plan_verdict({'v': ['alpha', 'beta']}) == 'reject'
