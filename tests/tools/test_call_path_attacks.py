"""Hostile tool calls through the per-call argument path: the Rust ``ArgumentDecoder`` changes no answer.

``MethodToolCallback.call`` tries the Rust decoder first, then pydantic's ``validate_json``, then the slow path
that lists every problem. Every text here is run through one callback with the decoder and through one
without it (``callback._decoder = None``: what ``TOOLWEAVE_PURE=1`` runs), and the result text, or the error's
type and message, must be the same; a fixed set also runs in a ``TOOLWEAVE_PURE=1`` process. Covered here
(not in ``test_decoder_attacks.py`` / ``tests/core/test_core_argument_decoder.py``): raw-text hostility at the
callback level (repeated keys around invalid values, ``-0``, ``1E+2``, 64-bit edges, escaped NUL and lone
surrogates, string-cache slot collisions), real pydantic features (aliases, ``populate_by_name``, frozen,
private attributes, computed fields, generic models, discriminated unions, dataclasses, TypedDict
``Required``/``NotRequired``, strict and string-transform configs), depth edges, 8 threads and ``acall``
concurrency, the raw-schema ``SchemaValidator`` against its twin on hostile texts, ``default_factory``
order and count, allowed extra arguments, repeated keys of validated dicts, repeated unexpected keys and
mutable parameter defaults. Each defect found is pinned by a test here: passing since its fix, or a strict xfail
whose reason names the cause and a fix.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import itertools
import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Generic, Literal, Optional, TypeVar, Union

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.concurrency import run_threads
from toolweave._core import ArgumentDecoder as RustDecoder
from toolweave._core import SchemaValidator as RustValidator
from toolweave._native import IMPLEMENTATION
from toolweave._reference.decode import ArgumentDecoder as TwinDecoder
from toolweave._reference.schema import SchemaValidator as TwinValidator
from toolweave.exceptions import SchemaValidationError, ToolArgumentsError
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from toolweave.tools.schema import SchemaOption
from typing_extensions import NotRequired, Required, TypedDict

pytestmark = pytest.mark.skipif(IMPLEMENTATION != 'rust', reason='compares the Rust decoder with the path without it')

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


# ------------------------------------------------------------------------------------------ tool types


class Color(str, enum.Enum):
    RED = 'red'
    GREEN = 'green'


class Level(enum.IntEnum):
    ONE = 1
    TWO = 2


class Frozen(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True)
    a: int
    b: str = 'x'


class Aliased(pydantic.BaseModel):
    full_name: str = pydantic.Field(alias='fullName')
    age: int = pydantic.Field(validation_alias='AGE', default=0)


class ByName(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(populate_by_name=True)
    full_name: str = pydantic.Field(alias='fullName')


class Forbid(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra='forbid')
    a: int


class Allow(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra='allow')
    a: int


class Private(pydantic.BaseModel):
    a: int
    _seen: list[int] = pydantic.PrivateAttr(default_factory=list)


class Computed(pydantic.BaseModel):
    a: int

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def double(self) -> int:
        return self.a * 2


class Tree(pydantic.BaseModel):
    v: int
    kids: list[Tree] = []


class Link(pydantic.BaseModel):
    next: Optional[Link] = None


class Partial(TypedDict, total=False):
    a: Required[int]
    b: str
    c: NotRequired[Optional[float]]


class Stripped(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(str_strip_whitespace=True)
    s: str


class Strict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True)
    n: int


T = TypeVar('T')


class Box(pydantic.BaseModel, Generic[T]):
    item: T


class Cat(pydantic.BaseModel):
    kind: Literal['cat']
    lives: int = 9


class Dog(pydantic.BaseModel):
    kind: Literal['dog']
    good: bool = True


@dataclasses.dataclass
class Point:
    x: int
    tags: list[str] = dataclasses.field(default_factory=list)


def scalars(i: int, f: float, s: str, b: bool, n: None = None) -> str:
    return repr((i, f, s, b, n))


def choices(c: Color, level: Level, lit: Literal['a', 1, True, None]) -> str:  # noqa: PYI061 - None in the literal
    return repr((c, level, lit))


def models(fr: Frozen, al: Aliased) -> str:
    return repr((fr, al, sorted(fr.model_fields_set), sorted(al.model_fields_set)))


def by_name(p: ByName) -> str:
    return repr(p)


def extras(f: Forbid, a: Allow) -> str:
    return repr((f, a, a.__pydantic_extra__))


def hidden(p: Private, c: Computed) -> str:
    return repr((p, p._seen, c, c.double))


def recursive(t: Tree, link: Optional[Link] = None) -> str:
    return repr((t, link))


def typed_dicts(t: Partial, opt: Optional[int] = 5) -> str:
    return repr((t, opt))


def configs(c: Stripped, s: Strict) -> str:
    return repr((c, s))


def generics(b: Box[int], bs: Box[list[str]]) -> str:
    return repr((b, bs))


def unions(pet: Annotated[Union[Cat, Dog], pydantic.Field(discriminator='kind')]) -> str:
    return repr(pet)


def dataclasses_(p: Point) -> str:
    return repr(p)


def containers(d: dict[str, int], a: dict[str, Any], nested: list[list[int]]) -> str:
    return repr((d, a, nested))


def anything(x: Any) -> str:
    return repr(x)


def bounded(
    a: Annotated[int, pydantic.Field(ge=-5, lt=10)],
    b: Annotated[float, pydantic.Field(gt=0.5, le=2**53)],
    s: Annotated[str, pydantic.Field(min_length=2, max_length=3)],
) -> str:
    return repr((a, b, s))


TOOLS: dict[str, Callable[..., str]] = {
    tool.__name__: tool
    for tool in (
        scalars,
        choices,
        models,
        by_name,
        extras,
        hidden,
        recursive,
        typed_dicts,
        configs,
        generics,
        unions,
        dataclasses_,
        containers,
        anything,
        bounded,
    )
}


# ------------------------------------------------------------------------------------------ running a call


def outcome(callback: Any, text: str) -> tuple[str, str]:
    """``('ok', result)`` or ``(exception type name, message)``."""
    try:
        return 'ok', callback.call(text)
    except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
        return type(exc).__name__, str(exc)


def callbacks(tool: Callable[..., str], **options: Any) -> tuple[MethodToolCallback, MethodToolCallback]:
    """One callback with the Rust decoder, one without it (the path ``TOOLWEAVE_PURE=1`` runs)."""
    with_decoder = MethodToolCallback(tool, **options)
    without = MethodToolCallback(tool, **options)
    without._decoder = None
    return with_decoder, without


def both(tool: Callable[..., str], text: str) -> tuple[str, str]:
    """The outcome of ``text``, asserted to be the same with and without the decoder."""
    with_decoder, without = callbacks(tool)
    got = outcome(with_decoder, text)
    assert got == outcome(without, text), text
    return got


def invalid(tool: str, *problems: str) -> tuple[str, str]:
    return 'ToolExecutionError', f"Invalid arguments for tool '{tool}': " + '; '.join(problems)


NOT_FINITE = 'Input should be a finite number'
INT64 = 'Input should be an integer between -2**63 and 2**63 - 1 (signed 64-bit)'

PINNED: list[tuple[Callable[..., str], str, tuple[str, str]]] = [
    (scalars, '{"i": -0, "f": -0, "s": "\\u0000", "b": false}', ('ok', "(0, 0.0, '\\x00', False, None)")),
    (scalars, '{"i": 9223372036854775807, "f": 9223372036854775808, "s": "", "b": true}', ('ok', "(9223372036854775807, 9.223372036854776e+18, '', True, None)")),
    (scalars, '{"i": -9223372036854775808, "f": 1e308, "s": "x", "b": true}', ('ok', "(-9223372036854775808, 1e+308, 'x', True, None)")),
    (scalars, '{"i": -9223372036854775809, "f": 1.0, "s": "x", "b": true}', invalid('scalars', f'i: {INT64}')),
    (scalars, '{"i": 1E+2, "f": 1e400, "s": "x", "b": true}', invalid('scalars', f'f: {NOT_FINITE}')),
    (scalars, '{"i": 1.0, "f": 123456789012345678901234567890, "s": "x", "b": 1}', ('ok', "(1, 1.2345678901234568e+29, 'x', True, None)")),
    (scalars, '{"i": 1, "f": 0.1e-400, "s": "x", "b": true}', ('ok', "(1, 0.0, 'x', True, None)")),
    # repeated keys: the last one counts, whatever the first was
    (scalars, '{"i": "x", "i": 2, "f": 1.5, "s": "x", "b": true}', ('ok', "(2, 1.5, 'x', True, None)")),
    (scalars, '{"i": 1, "f": 1.5, "s": "x", "b": true, "n": 1, "n": null}', ('ok', "(1, 1.5, 'x', True, None)")),
    (scalars, '{"i": 2, "i": "x", "f": 1.5, "s": "x", "b": true}', invalid('scalars', 'i: Input should be a valid integer, unable to parse string as an integer')),
    (scalars, '{"i": 1, "f": 1.5, "s": "x", "b": true, "n": null, "n": 1}', invalid('scalars', 'n: Input should be null')),
    (choices, '{"c": "red", "level": true, "lit": 1.0}', ('ok', "(<Color.RED: 'red'>, <Level.ONE: 1>, True)")),
    (choices, '{"c": "red", "level": 1.0, "lit": null}', ('ok', "(<Color.RED: 'red'>, <Level.ONE: 1>, None)")),
    (choices, '{"c": "red", "level": 2, "lit": false}', invalid('choices', "lit: Input should be 'a', 1, True or None")),
    (models, '{"fr": {"a": 1, "a": 2}, "al": {"fullName": "x", "fullName": "y", "AGE": 5}}', ('ok', "(Frozen(a=2, b='x'), Aliased(full_name='y', age=5), ['a'], ['age', 'full_name'])")),
    (models, '{"fr": {"a": 1}, "al": {"full_name": "x", "age": 5}}', invalid('models', 'al.fullName: Field required')),
    (by_name, '{"p": {"fullName": "x", "full_name": "y"}}', ('ok', "ByName(full_name='x')")),
    (by_name, '{"p": {"full_name": "y"}}', ('ok', "ByName(full_name='y')")),
    (extras, '{"f": {"a": 1}, "a": {"a": 1, "z": 2, "z": 3}}', ('ok', "(Forbid(a=1), Allow(a=1, z=3), {'z': 3})")),
    (extras, '{"f": {"a": 1}, "a": {"a": 1, "z": 1e999}}', invalid('extras', f'a.z: {NOT_FINITE}')),
    (extras, '{"f": {"a": 1}, "a": {"a": 1, "z": 99999999999999999999}}', invalid('extras', f'a.z: {INT64}')),
    (hidden, '{"p": {"a": 1, "_seen": [1]}, "c": {"a": 2, "double": 7}}', ('ok', '(Private(a=1), [], Computed(a=2, double=4), 4)')),
    (typed_dicts, '{"t": {"a": 1, "c": 1}, "opt": null}', ('ok', "({'a': 1, 'c': 1.0}, None)")),
    (typed_dicts, '{"t": {"a": 1, "b": "x", "c": null, "d": 1}}', invalid('typed_dicts', 't.d: Extra inputs are not permitted')),
    # a nested extra next to a left-out field (the slow path): both, in pydantic's order (found by hypothesis)
    (typed_dicts, '{"t": {"v": {}}}', invalid('typed_dicts', 't.a: Field required', 't.v: Extra inputs are not permitted')),
    (typed_dicts, '{"t": {"v": 1, "b": 3}}', invalid('typed_dicts', 't.a: Field required', 't.b: Input should be a valid string', 't.v: Extra inputs are not permitted')),
    (typed_dicts, '{"t": {"a": 1, "v": 1}, "opt": "x", "w": 1}', invalid('typed_dicts', "unexpected argument 'w'", 't.v: Extra inputs are not permitted', 'opt: Input should be a valid integer, unable to parse string as an integer')),
    (configs, '{"c": {"s": " x "}, "s": {"n": 1}}', ('ok', "(Stripped(s='x'), Strict(n=1))")),
    (configs, '{"c": {"s": " x "}, "s": {"n": "1"}}', invalid('configs', 's.n: Input should be a valid integer')),
    (generics, '{"b": {"item": 1}, "bs": {"item": ["a", "\\u0000"]}}', ('ok', "(Box[int](item=1), Box[list[str]](item=['a', '\\x00']))")),
    (unions, '{"pet": {"kind": "dog", "good": false, "kind": "cat"}}', ('ok', "Cat(kind='cat', lives=9)")),
    (dataclasses_, '{"p": {"x": 1, "tags": ["\\ud83d\\ude00"]}}', ('ok', "Point(x=1, tags=['\U0001f600'])")),
    (containers, '{"d": {"a": "x", "a": 2}, "a": {"k": 1e999, "k": 1}, "nested": [[], [-0]]}', invalid('containers', 'd.a: Input should be a valid integer, unable to parse string as an integer')),  # pydantic validates every pair of a dict
    (containers, '{"d": {"a": 1, "a": 2}, "a": {"k": 1e999, "k": 1}, "nested": [[], [-0]]}', ('ok', "({'a': 2}, {'k': 1}, [[], [0]])")),
    (containers, '{"d": {"a\\u003a": 1}, "a": {"\\u0000": null, "": [1E+2]}, "nested": []}', ('ok', "({'a:': 1}, {'\\x00': None, '': [100.0]}, [])")),
    (containers, '{"d": {}, "a": {"k": 1, "k": 1e999}, "nested": []}', invalid('containers', f'a.k: {NOT_FINITE}')),
    (anything, '{"x": 18446744073709551615}', invalid('anything', f'x: {INT64}')),
    (bounded, '{"a": 9, "b": 9007199254740993, "s": "\\ud83d\\ude00\\ud83d\\ude00"}', ('ok', "(9, 9007199254740992.0, '\U0001f600\U0001f600')")),
    (bounded, '{"a": 10, "b": 0.5, "s": "a"}', invalid('bounded', 'a: Input should be less than 10', 'b: Input should be greater than 0.5', 's: String should have at least 2 characters')),
]  # fmt: skip


@pytest.mark.parametrize(
    ('tool', 'text', 'want'), PINNED, ids=[f'{t.__name__}-{i}' for i, (t, _, _) in enumerate(PINNED)]
)
def test_pinned_hostile_calls_answer_the_same_with_and_without_the_decoder(
    tool: Callable[..., str], text: str, want: tuple[str, str]
) -> None:
    assert both(tool, text) == want


@pytest.mark.parametrize(
    ('text', 'near'),
    [
        ('{"i": 1, "f": 1.5, "s": "\\ud800", "b": true}', 'invalid surrogate escape'),
        ('{"i": 1, "f": 1.5, "s": "x", "b": true, "\\udc00": 1}', 'invalid surrogate escape'),
        ('{"i": 1, "f": 1.5, "s": "\ud800", "b": true}', 'invalid character (lone surrogate)'),
        ('{"i": 1, "f": 1, "s": "x", "b": true,}', 'expected a string key'),
        ('{"i": 01, "f": 1, "s": "x", "b": true}', "expected ',' or '}'"),
        ('{"i": 1, "f": 1, "s": "x", "b": true} x', 'extra data after the JSON value'),
    ],
)
def test_text_that_is_not_json_is_a_syntax_error_either_way(text: str, near: str) -> None:
    kind, message = both(scalars, text)
    assert kind == 'ToolExecutionError'
    assert message.startswith("Invalid arguments for tool 'scalars': invalid tool arguments at line 1 column ")
    assert near in message


# ------------------------------------------------------------------------------------------ random hostile texts

NUMBERS = ['0', '-0', '1', '-1', '1.0', '-0.0', '1E+2', '1e-400', '1e400', '-1e400', '9223372036854775807']
NUMBERS += ['9223372036854775808', '-9223372036854775808', '-9223372036854775809', '9007199254740993', '1.5', '2']
STRINGS = [
    '""',
    '"x"',
    '"red"',
    '"a"',
    '"1"',
    '" x "',
    '"\\u0000"',
    '"\\ud83d\\ude00"',
    '"ab"',
    '"abcd"',
    '"cat"',
    '"dog"',
]
WORDS = ['true', 'false', 'null', '[]', '{}', '[1, "a"]', '[[1], [-0]]', '{"a": 1}', '{"k": 1e999}', '{"v": 1}']
SCALAR_TOKENS = NUMBERS + STRINGS + WORDS


@st.composite
def object_texts(draw: st.DrawFn, keys: list[str], depth: int = 2) -> str:
    """A JSON object text over ``keys`` (and stray ones) with hostile scalars, repeated keys and nested objects."""
    members: list[str] = []
    for _ in range(draw(st.integers(0, len(keys) + 2))):
        key = draw(st.sampled_from([*keys, 'zz', 'kind', '_seen', 'fullName', 'AGE']))
        if depth > 0 and draw(st.integers(0, 3)) == 0:
            value = draw(object_texts(keys=['a', 'b', 'v', 'item', 'kind', 'x', 'n', 's'], depth=depth - 1))
        else:
            value = draw(st.sampled_from(SCALAR_TOKENS))
        members.append(f'{json.dumps(key)}: {value}')
    if members and draw(st.booleans()):  # a key given again, after or before, with another value
        again = draw(st.sampled_from(members)).split(':', 1)[0] + ': ' + draw(st.sampled_from(SCALAR_TOKENS))
        members.insert(draw(st.integers(0, len(members))), again)
    return '{' + ', '.join(members) + '}'


@st.composite
def calls(draw: st.DrawFn) -> tuple[Callable[..., str], str]:
    tool = draw(st.sampled_from(sorted(TOOLS)))
    callback = MethodToolCallback(TOOLS[tool])
    names = list(callback.tool_definition.input_schema['properties'])
    return TOOLS[tool], draw(object_texts(keys=names))


@SETTINGS
@given(call=calls())
def test_random_hostile_calls_answer_the_same_with_and_without_the_decoder(
    call: tuple[Callable[..., str], str],
) -> None:
    tool, text = call
    both(tool, text)


# ------------------------------------------------------------------------------------------ TOOLWEAVE_PURE=1

PURE_CASES = [(tool.__name__, text) for tool, text, _ in PINNED] + [
    ('recursive', '{"t": ' + '{"v": 1, "kids": [' * 99 + '{"v": 0}' + ']}' * 99 + '}'),
    ('recursive', '{"t": ' + '{"v": 1, "kids": [' * 100 + '{"v": 0}' + ']}' * 100 + '}'),
    ('anything', '{"x": ' + '[' * 199 + ']' * 199 + '}'),
    ('anything', '{"x": ' + '[' * 201 + ']' * 201 + '}'),
]

_PURE_SCRIPT = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[2])
spec = importlib.util.spec_from_file_location('attacks', sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules['attacks'] = module
spec.loader.exec_module(module)
from toolweave._native import IMPLEMENTATION
from toolweave.tools import MethodToolCallback
cases = json.loads(sys.stdin.read())
print(json.dumps([IMPLEMENTATION, [module.outcome(MethodToolCallback(module.TOOLS[t]), x) for t, x in cases]]))
"""


def test_a_pure_process_answers_as_the_rust_core() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run(
        [sys.executable, '-c', _PURE_SCRIPT, os.path.abspath(__file__), os.path.dirname(here)],
        input=json.dumps(PURE_CASES),
        capture_output=True,
        text=True,
        env={**os.environ, 'TOOLWEAVE_PURE': '1'},
        timeout=120,
        check=True,
    )
    implementation, pure = json.loads(done.stdout)
    assert implementation == 'reference'
    rust = [list(outcome(MethodToolCallback(TOOLS[tool]), text)) for tool, text in PURE_CASES]
    assert rust == pure
    assert rust[-4][0] == 'ok' and rust[-2][0] == 'ok'  # depth edges: 99 trees and 199 lists are taken
    assert 'nesting deeper than 200 levels' in rust[-3][1] and 'nesting deeper than 200 levels' in rust[-1][1]


# ------------------------------------------------------------------------------------------ string cache slots


def _slot(text: str) -> int:
    """The string-cache slot of ``text`` as rust/py/json.rs ``StrCache::slot`` computes it (2 to 63 bytes)."""
    b = text.encode()
    n = len(b)

    def word(at: int, size: int) -> int:
        return int.from_bytes(b[at : at + size].ljust(8, b'\0'), 'little')

    if n >= 8:
        lo, hi = word(0, 8), word(n - 8, 8)
    elif n >= 4:
        lo, hi = word(0, 4), word(n - 4, 4)
    else:
        lo, hi = b[0] | b[n // 2] << 8, b[n - 1]
    mask = 2**64 - 1
    h = (((lo ^ n) * 0x9E3779B97F4A7C15) & mask) ^ ((hi * 0x517CC1B727220A95) & mask)
    return h >> 52


def _colliding(count: int) -> list[str]:
    """``count`` distinct keys of the same string-cache slot."""
    by_slot: dict[int, list[str]] = {}
    for i in itertools.count():
        key = f'key-{i}'
        found = by_slot.setdefault(_slot(key), [])
        found.append(key)
        if len(found) == count:
            return found
    raise AssertionError('unreachable')


class Keyed(TypedDict):
    values: dict[str, int]
    anything: dict[str, Any]


def keyed(k: Keyed, tags: list[str]) -> str:
    return json.dumps([k, tags])


def test_keys_sharing_a_string_cache_slot_keep_their_own_text() -> None:
    keys = _colliding(4)
    assert len({_slot(key) for key in keys}) == 1
    values = {key: i for i, key in enumerate(keys)}
    text = json.dumps({'k': {'values': values, 'anything': {key: key for key in reversed(keys)}}, 'tags': keys * 2})
    want = json.dumps([{'values': values, 'anything': {key: key for key in reversed(keys)}}, keys * 2])
    for _ in range(3):  # each key evicts the other from the slot, call after call
        assert both(keyed, text) == ('ok', want)
    repeated = text.replace(f'"{keys[1]}": 1', f'"{keys[1]}": 1, "{keys[2]}": 7', 1)  # a repeated key of the dict
    assert both(keyed, repeated)[0] == 'ok'
    assert json.loads(both(keyed, repeated)[1])[0]['values'][keys[2]] == 2  # its last value


# ------------------------------------------------------------------------------------------ threads and acall

MIXED = [
    (scalars, '{"i": 1, "f": 2, "s": "x", "b": true}'),
    (scalars, '{"i": "x", "f": 2, "s": "x", "b": true}'),
    (scalars, '{"i": 1, "f": 1e999, "s": "x", "b": true}'),
    (models, '{"fr": {"a": 1}, "al": {"fullName": "x", "AGE": 3}}'),
    (models, '{"fr": {"a": "one"}, "al": {}}'),
    (recursive, '{"t": {"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": []}]}, "link": {"next": {"next": null}}}'),
    (recursive, '{"t": {"v": 1, "kids": [{"v": 2}, {"v": "3"}]}}'),  # lax: "3" is 3
    (containers, '{"d": {"a": 1, "b": 2}, "a": {"x": [1, 2.5, null]}, "nested": [[1, 2], [3]]}'),
    (containers, '{"d": {"a": 1, "a": 2}, "a": {}, "nested": [[99999999999999999999]]}'),
    (typed_dicts, '{"t": {"a": 1, "b": "x"}}'),
    (typed_dicts, '{"t": {"b": "x"}, "opt": "no"}'),
    (scalars, '{"i": 1, "f": 2, "s": "\\ud800", "b": true}'),
]


def test_eight_threads_answer_as_one() -> None:
    shared = {tool: MethodToolCallback(tool) for tool, _ in MIXED}  # one callback per tool, shared by the threads
    want = [outcome(MethodToolCallback(tool), text) for tool, text in MIXED]
    assert sum(kind == 'ok' for kind, _ in want) == 6
    got: list[list[tuple[str, str]]] = []
    barrier = threading.Barrier(8)

    def work(shift: int) -> None:
        barrier.wait(timeout=30)
        for round_ in range(30):
            order = [(shift + round_ + i) % len(MIXED) for i in range(len(MIXED))]
            answers = [(i, outcome(shared[MIXED[i][0]], MIXED[i][1])) for i in order]
            got.append([answer for _, answer in sorted(answers)])

    run_threads([threading.Thread(target=work, args=(shift,)) for shift in range(8)])
    assert len(got) == 8 * 30
    assert all(answers == want for answers in got)


def test_eight_threads_evicting_each_others_cached_keys_answer_as_one() -> None:
    """The decoder's reads and a raw schema's plan (which seeds its names into the parse cache) share slots."""
    keys = _colliding(4)
    schema = {
        'type': 'object',
        'properties': {keys[0]: {'type': 'integer'}, keys[1]: {'enum': [keys[2], keys[3]]}},
        'required': [keys[0]],
        'additionalProperties': False,
    }
    raw = FunctionToolCallback.builder('raw', lambda d: json.dumps(d)).input_schema(schema).build()
    decoded = MethodToolCallback(keyed)
    texts: list[tuple[Any, str]] = [
        (raw, json.dumps({keys[0]: 1, keys[1]: keys[3]})),
        (raw, json.dumps({keys[1]: keys[2], keys[0]: -(2**63)})),
        (raw, json.dumps({keys[0]: 'x', keys[1]: keys[0]})),
        (raw, json.dumps({keys[0]: 1, keys[2]: 1})),
        (
            decoded,
            json.dumps({'k': {'values': {keys[0]: 1, keys[1]: 2}, 'anything': {keys[2]: keys[3]}}, 'tags': keys}),
        ),
        (decoded, json.dumps({'tags': keys[::-1], 'k': {'anything': {keys[3]: [keys[0]]}, 'values': {keys[2]: 3}}})),
        (decoded, json.dumps({'k': {'values': {keys[0]: keys[1]}, 'anything': {}}, 'tags': []})),
    ]
    want = [outcome(callback, text) for callback, text in texts]
    assert [kind for kind, _ in want] == [
        'ok',
        'ok',
        'ToolExecutionError',
        'ToolExecutionError',
        'ok',
        'ok',
        'ToolExecutionError',
    ]
    got: list[list[tuple[str, str]]] = []
    barrier = threading.Barrier(8)

    def work(shift: int) -> None:
        barrier.wait(timeout=30)
        for round_ in range(40):
            order = [(shift + round_ + i) % len(texts) for i in range(len(texts))]
            answers = sorted((i, outcome(*texts[i])) for i in order)
            got.append([answer for _, answer in answers])

    run_threads([threading.Thread(target=work, args=(shift,)) for shift in range(8)])
    assert len(got) == 8 * 40
    assert all(answers == want for answers in got)


def test_acall_gathered_answers_as_call() -> None:
    shared = {tool: MethodToolCallback(tool) for tool, _ in MIXED}
    want = [outcome(MethodToolCallback(tool), text) for tool, text in MIXED]

    async def one(tool: Callable[..., str], text: str) -> tuple[str, str]:
        try:
            return 'ok', await shared[tool].acall(text)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc).__name__, str(exc)

    async def main() -> list[tuple[str, str]]:
        return list(await asyncio.gather(*(one(tool, text) for _ in range(10) for tool, text in MIXED)))

    assert asyncio.run(main()) == want * 10


async def async_models(fr: Frozen, al: Aliased) -> str:
    await asyncio.sleep(0)
    return models(fr, al)


def test_an_async_tool_answers_as_its_sync_twin_through_call_and_acall() -> None:
    texts = [text for tool, text, _ in PINNED if tool is models] + ['{"fr": {"a": 1}, "al": {"fullName": "\\ud800"}}']
    sync, asynchronous = MethodToolCallback(models), MethodToolCallback(async_models)
    want = [outcome(sync, text) for text in texts]
    assert [outcome(asynchronous, text) for text in texts] == [
        (kind, message.replace("'models'", "'async_models'")) for kind, message in want
    ]

    async def one(text: str) -> tuple[str, str]:
        try:
            return 'ok', await asynchronous.acall(text)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc).__name__, str(exc)

    async def main() -> list[tuple[str, str]]:
        inside = outcome(asynchronous, texts[0])  # call() from a running loop: run on a helper thread
        return [inside, *await asyncio.gather(*(one(text) for _ in range(5) for text in texts))]

    got = asyncio.run(main())
    assert got[0] == want[0]
    assert got[1:] == [(k, m.replace("'models'", "'async_models'")) for k, m in want] * 5


# ------------------------------------------------------------------------------------------ raw schema (FunctionToolCallback)

RAW_SCHEMA = {
    'type': 'object',
    'properties': {
        'a': {'type': 'integer'},
        'b': {'type': 'number', 'minimum': 0},
        's': {'type': 'string', 'maxLength': 2},
        'e': {'enum': ['x', 1, None]},
        'l': {'type': 'array', 'items': {'$ref': '#/$defs/n'}},
    },
    'required': ['a'],
    '$defs': {'n': {'type': 'object', 'properties': {'v': {'type': ['integer', 'null']}, 'k': {'$ref': '#/$defs/n'}}}},
}

RAW_TEXTS = [
    '{"a": 1, "a": "x"}',
    '{"a": "x", "a": 1}',
    '{"a": -0, "b": -0.0}',
    '{"a": 1E+2}',
    '{"a": 1.0}',
    '{"a": 9223372036854775807}',
    '{"a": 9223372036854775808}',
    '{"a": -9223372036854775809}',
    '{"a": 1, "b": 1e400}',
    '{"a": 1, "s": "\\ud83d\\ude00\\ud83d\\ude00"}',
    '{"a": 1, "s": "\\u0000\\u0000\\u0000"}',
    '{"a": 1, "s": "\\ud800"}',
    '{"a": 1, "\\udc00": 1}',
    '{"a": 1, "e": 1.0}',
    '{"a": 1, "e": true}',
    '{"a": 1, "e": "x", "e": 2}',
    '{"a": 1, "zz": 99999999999999999999}',
    '{"a": 1, "l": [{"v": 1, "k": {"v": null, "k": {"v": 1.0}}}]}',
    '{"a": 1, "l": [{"v": 1.5}]}',
    '{"a": 1, "l": [{"v": 1, "v": null}]}',
    '{"a": 1, "d": ' + '[' * 199 + ']' * 199 + '}',
    '{"a": 1, "d": ' + '[' * 200 + ']' * 200 + '}',
    '{"a": 1, "d": ' + '[' * 201 + ']' * 201 + '}',
    '{"a": NaN}',
    '[1]',
]


def _raw_answer(validator_class: Any, text: str) -> Any:
    """What ``validate_json(text, int64=True)`` gives: the value, the failing pointers, or the error type."""
    validator = validator_class(RAW_SCHEMA)
    try:
        return 'ok', validator.validate_json(text, int64=True)
    except SchemaValidationError as exc:
        return 'invalid', sorted(error['pointer'] for error in exc.errors)
    except ToolArgumentsError:
        return 'not json', None
    except ValueError:
        return 'number', None


@pytest.mark.parametrize('text', RAW_TEXTS)
def test_raw_schema_hostile_texts_answer_as_the_twin(text: str) -> None:
    got = _raw_answer(RustValidator, text)
    assert got == _raw_answer(TwinValidator, text)
    if got[0] == 'ok':
        tool = FunctionToolCallback.builder('raw', lambda d: json.dumps(d)).input_schema(RAW_SCHEMA).build()
        assert json.loads(tool.call(text)) == got[1]


def test_raw_schema_pinned_answers() -> None:
    answers = dict(zip(RAW_TEXTS, (_raw_answer(RustValidator, text) for text in RAW_TEXTS), strict=True))
    assert answers['{"a": "x", "a": 1}'] == ('ok', {'a': 1})
    assert answers['{"a": 1, "a": "x"}'] == ('invalid', ['/a'])
    assert answers['{"a": 1.0}'] == ('ok', {'a': 1.0})
    assert answers['{"a": 9223372036854775808}'] == ('number', None)  # int64=True
    assert answers['{"a": 1, "zz": 99999999999999999999}'] == ('number', None)
    assert answers['{"a": 1, "l": [{"v": 1, "v": null}]}'] == ('ok', {'a': 1, 'l': [{'v': None}]})
    assert answers['{"a": 1, "s": "\\ud800"}'] == ('not json', None)
    assert answers['{"a": 1, "d": ' + '[' * 200 + ']' * 200 + '}'][0] == 'ok'  # the innermost list at depth 200
    assert answers['{"a": 1, "d": ' + '[' * 201 + ']' * 201 + '}'] == ('not json', None)
    assert answers['{"a": NaN}'] == ('not json', None)
    assert answers['{"a": 1, "e": 1.0}'] == ('ok', {'a': 1, 'e': 1.0})  # JSON Schema: 1.0 equals 1
    assert answers['{"a": 1, "e": true}'] == ('invalid', ['/e'])


# ------------------------------------------------------------------------------------------ default_factory order and count

SERIALS = itertools.count()


def _serial() -> int:
    return next(SERIALS)


class Inner(pydantic.BaseModel):
    c: int = pydantic.Field(default_factory=_serial)


class Outer(pydantic.BaseModel):
    a: int = pydantic.Field(default_factory=_serial)
    b: Inner
    z: int = pydantic.Field(default_factory=_serial)


def serials(o: Outer) -> str:
    return repr((o.a, o.b.c, o.z))


def _fresh_serials() -> None:
    global SERIALS
    SERIALS = itertools.count()


def test_factories_run_in_pydantics_order_in_the_twin_and_without_the_decoder() -> None:
    adapter = pydantic.TypeAdapter(Outer)
    _fresh_serials()
    want = adapter.validate_json('{"b": {}}')
    assert (want.a, want.b.c, want.z) == (0, 1, 2)  # pydantic: each field in schema order, depth first
    _fresh_serials()
    twin = TwinDecoder.build(adapter.core_schema).decode('{"b": {}}')
    assert (twin.a, twin.b.c, twin.z) == (0, 1, 2)
    _fresh_serials()
    without = MethodToolCallback(serials)
    without._decoder = None
    assert without.call('{"o": {"b": {}}}') == '(0, 1, 2)'


def test_factories_run_in_pydantics_order_with_the_rust_decoder() -> None:
    adapter = pydantic.TypeAdapter(Outer)
    _fresh_serials()
    rust = RustDecoder.build(adapter.core_schema).decode('{"b": {}}')
    assert (rust.a, rust.b.c, rust.z) == (0, 1, 2)
    _fresh_serials()
    assert MethodToolCallback(serials).call('{"o": {"b": {}}}') == '(0, 1, 2)'


STAMPS: list[int] = []


def _stamp() -> Any:
    STAMPS.append(1)
    return len(STAMPS), uuid.UUID(int=7)  # not a number the numbers rule knows: "look closer"


class Order(TypedDict):
    label: str
    stamp: NotRequired[Annotated[Any, pydantic.Field(default_factory=_stamp)]]


def order(o: Order) -> str:
    return repr(o['stamp'])


@pytest.mark.parametrize('decoder', [False, True], ids=['without-decoder', 'decoder'])
def test_a_typed_dict_default_factory_runs_once_per_call(decoder: bool) -> None:
    STAMPS.clear()
    callback = MethodToolCallback(order)
    if not decoder:
        callback._decoder = None
    assert callback.call('{"o": {"label": "a"}}') == repr((1, uuid.UUID(int=7)))
    assert STAMPS == [1]


# ------------------------------------------------------------------------------------------ allowed additional properties


def plain(a: int) -> str:
    return repr(a)


@pytest.mark.parametrize('extra', ['2', '"x"', '[1, {"k": null}]'])
def test_an_allowed_extra_argument_is_ignored(extra: str) -> None:
    with_decoder, without = callbacks(plain, schema_options=[SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT])
    assert 'additionalProperties' not in with_decoder.tool_definition.input_schema
    text = f'{{"a": 1, "zz": {extra}}}'
    assert outcome(with_decoder, text) == outcome(without, text) == ('ok', '1')


@pytest.mark.parametrize('extra', ['1e999', '99999999999999999999', 'NaN'])
def test_an_allowed_extra_argument_with_a_bad_number_is_not_unexpected(extra: str) -> None:
    with_decoder, without = callbacks(plain, schema_options=[SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT])
    text = f'{{"a": 1, "zz": {extra}}}'
    got = outcome(with_decoder, text)
    assert got == outcome(without, text)
    assert got == ('ok', '1')


# ------------------------------------------------------------------------------------------ repeated keys of a validated dict


class Counts(pydantic.BaseModel):
    counts: dict[str, int]


def counted(m: Counts, rows: list[dict[str, float]], note: Any = None) -> str:
    return repr((m, rows))


def test_a_repeated_key_with_an_invalid_first_value_is_refused_when_only_its_parameter_is_sent() -> None:
    # pydantic validates every pair of a validated dict, the earlier value of a repeated key too
    problem = 'Input should be a valid integer, unable to parse string as an integer'
    with pytest.raises(pydantic.ValidationError, match=problem):
        pydantic.TypeAdapter(Counts).validate_json('{"counts": {"a": "x", "a": 2}}')
    text = '{"m": {"counts": {"a": "x", "a": 2}}, "rows": [{"k": "y", "k": 1}]}'  # every parameter sent fails
    assert both(counted, text) == invalid(
        'counted',
        f'm.counts.a: {problem}',
        'rows.0.k: Input should be a valid number, unable to parse string as a number',
    )


NOT_INT = 'Input should be a valid integer, unable to parse string as an integer'


class Slot(pydantic.BaseModel):
    at: Optional[int]  # required by pydantic, left out of the schema's required (Spring's rule)


def slotted(m: Counts, slots: dict[str, Slot]) -> str:  # no Any: the one-step path is the bounded validator
    return repr((m, slots))


@pytest.mark.parametrize(
    ('tool', 'text', 'expected'),
    [
        (counted, '{"m": {"counts": {"a": "x", "a": 2}}, "rows": []}', invalid('counted', f'm.counts.a: {NOT_INT}')),
        (
            counted,
            '{"m": {"counts": {"a": "x", "a": 2}}, "rows": [], "note": 1}',
            invalid('counted', f'm.counts.a: {NOT_INT}'),
        ),
        (
            counted,
            '{"m": {"counts": {}}, "rows": [{"k": "bad", "k": 1.5}], "note": null}',
            invalid('counted', 'rows.0.k: Input should be a valid number, unable to parse string as a number'),
        ),
        (  # rows left out: named in parameter order
            counted,
            '{"m": {"counts": {"a": "x", "a": 2}}}',
            invalid('counted', f'm.counts.a: {NOT_INT}', 'rows: missing required argument'),
        ),
        (
            counted,
            '{"m": {"counts": {"a": 1e999, "a": 2}}, "rows": []}',
            invalid('counted', f'm.counts.a: {NOT_FINITE}'),
        ),
        (counted, '{"m": {"counts": {"a": NaN, "a": 2}}, "rows": []}', invalid('counted', f'm.counts.a: {NOT_FINITE}')),
        (counted, '{"m": {"counts": {"a": 1e30, "a": 2}}, "rows": []}', invalid('counted', f'm.counts.a: {INT64}')),
        # a valid earlier value, or a repeated key pydantic keeps the last of (a model field, a parameter)
        (counted, '{"m": {"counts": {"a": 1, "a": 2}}, "rows": []}', ('ok', "(Counts(counts={'a': 2}), [])")),
        (counted, '{"m": {"counts": {"a": "x"}, "counts": {}}, "rows": []}', ('ok', '(Counts(counts={}), [])')),
        (counted, '{"m": {"counts": {"a": "x"}}, "m": {"counts": {}}, "rows": []}', ('ok', '(Counts(counts={}), [])')),
        (  # the bounded validator's failure elsewhere sends the call to the slow path
            slotted,
            '{"m": {"counts": {"a": "x", "a": 2}}, "slots": {"s": {"at": 1e999}}}',
            invalid('slotted', f'm.counts.a: {NOT_INT}', f'slots.s.at: {NOT_FINITE}'),
        ),
        (  # a left-out field that admits None is filled, in an earlier pair too
            slotted,
            '{"m": {"counts": {}}, "slots": {"s": {}, "s": {"at": 1}}}',
            ('ok', "(Counts(counts={}), {'s': Slot(at=1)})"),
        ),
        (
            slotted,
            '{"m": {"counts": {}}, "slots": {"s": {"at": "x"}, "s": {}}}',
            invalid('slotted', f'slots.s.at: {NOT_INT}'),
        ),
    ],
)
def test_a_repeated_key_with_an_invalid_earlier_value_is_refused_beside_valid_parameters(
    tool: Callable[..., str], text: str, expected: tuple[str, str]
) -> None:
    """pydantic validates every pair of a ``dict``; the slow path sees only the last of a repeated key."""
    assert both(tool, text) == expected


# ------------------------------------------------------------------------------------------ problems named once


def nothing() -> str:
    return 'done'


def one(a: int) -> str:
    return repr(a)


def test_a_repeated_unexpected_argument_is_named_once_by_the_slow_path() -> None:
    assert both(one, '{"x": 1, "x": 2}') == invalid('one', "unexpected argument 'x'", 'a: missing required argument')


@pytest.mark.parametrize(
    ('tool', 'text'),
    [(nothing, '{"x": 1, "x": 2}'), (one, '{"a": 1, "x": 1, "x": 2}'), (one, '{"a": 1, "x": 1e999, "x": 2}')],
)
def test_a_repeated_unexpected_argument_is_named_once(tool: Callable[..., str], text: str) -> None:
    assert both(tool, text) == invalid(tool.__name__, "unexpected argument 'x'")


# ------------------------------------------------------------------------------------------ mutable defaults


def appended(a: int, seen: list[int] = [], copied: Annotated[list[int], pydantic.Field(default=[])] = []) -> str:  # noqa: B006 - the attack
    seen.append(a)
    copied.append(a)
    return json.dumps([seen, copied])


def test_a_field_default_is_a_fresh_copy_per_call() -> None:
    callback = MethodToolCallback(appended)
    first, second = callback.call('{"a": 1}'), callback.call('{"a": 2}')
    assert json.loads(first)[1] == [1] and json.loads(second)[1] == [2]


def test_a_plain_mutable_default_is_a_fresh_copy_per_call() -> None:
    callback = MethodToolCallback(appended)
    first, second = callback.call('{"a": 1}'), callback.call('{"a": 2}')
    assert json.loads(first)[0] == [1] and json.loads(second)[0] == [2]


def _object_text(pairs: list[tuple[str, str]]) -> str:
    return '{' + ', '.join(f'{json.dumps(key)}: {value}' for key, value in pairs) + '}'


_PAIR_VALUES = st.sampled_from(['1', '-2', '1.5', '"x"', '"3"', 'true', 'null', '[]', '1e2'])
_PAIRS = st.lists(st.tuples(st.sampled_from(['a', 'b']), _PAIR_VALUES), max_size=4).map(_object_text)


@SETTINGS
@given(counts=_PAIRS, rows=st.lists(_PAIRS, max_size=2), note=st.sampled_from(['', ', "note": 1']))
def test_a_text_with_repeated_keys_is_accepted_exactly_when_pydantic_accepts_it(
    counts: str, rows: list[str], note: str
) -> None:
    text = f'{{"m": {{"counts": {counts}}}, "rows": [{", ".join(rows)}]{note}}}'
    adapter = MethodToolCallback(counted)._schema.arguments
    assert adapter is not None
    try:
        adapter.validate_json(text)
        accepted = True
    except pydantic.ValidationError:
        accepted = False
    kind, _ = both(counted, text)
    assert (kind == 'ok') is accepted, text
