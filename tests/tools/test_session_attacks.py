"""Attacks on this session's changes: repeated keys in dict parameters (``method.py``), raw-schema number wording
(``_numbers.schema_problems``/``bounded_integers``) and model instances built by the Rust decoder (``rust/py/model.rs``).

A tool call whose JSON holds a repeated key must be refused exactly when pydantic's ``validate_json`` refuses it,
with the Rust decoder and without it (``callback._decoder = None``), with ``checked_arguments`` (no ``Any``
parameter) and without it (an ``Any`` parameter); the ``json`` parse that finds repeated keys never raises out.
Models the decoder builds are compared, attribute by attribute, with pydantic's (``assert_same``), in threads too.
"""

from __future__ import annotations

import functools
import gc
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Generic, Optional, TypeVar, Union

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.concurrency import run_threads
from toolweave._core import ArgumentDecoder as RustDecoder
from toolweave._native import IMPLEMENTATION
from toolweave._reference.decode import ArgumentDecoder as TwinDecoder
from toolweave.mcp.callback import _decoder as mcp_decoder
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from toolweave.tools._numbers import OUT_OF_RANGE
from toolweave.tools.definition import ToolDefinition
from toolweave.tools.method import repeated_key_owners
from typing_extensions import Self, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'core'))
from test_core_argument_decoder import assert_same

pytestmark = pytest.mark.skipif(IMPLEMENTATION != 'rust', reason='compares the Rust decoder with the path without it')

# ------------------------------------------------------------------------------------------ 1. repeated keys


class Req(pydantic.BaseModel):
    at: int


class Opt(pydantic.BaseModel):
    at: Optional[int]


class Td(TypedDict):
    counts: dict[str, int]


@pydantic.dataclasses.dataclass
class Dc:
    counts: dict[str, int]


def with_any(d: dict[str, int], note: Any = None) -> str:  # Any: no checked_arguments
    return repr((d, note))


def plain(d: dict[str, int], n: int = 0) -> str:  # checked_arguments present
    return repr((d, n))


def required(d: dict[str, Req], n: int = 0) -> str:
    return repr((d, n))


def required_any(d: dict[str, Req], note: Any = None) -> str:
    return repr((d, note))


def listed(r: list[dict[str, Req]], note: Any = None) -> str:
    return repr((r, note))


def optional_field(d: dict[str, Opt], n: int = 0) -> str:
    return repr((d, n))


def rows(r: list[dict[str, int]], n: int = 0) -> str:
    return repr((r, n))


def typed(t: Td, n: int = 0) -> str:
    return repr((t, n))


def data(c: Dc, n: int = 0) -> str:
    return repr((c, n))


def optional(o: Optional[dict[str, int]] = None, n: int = 0) -> str:
    return repr((o, n))


def union(u: Union[int, dict[str, int]] = 0, n: int = 0) -> str:
    return repr((u, n))


def outcome(callback: MethodToolCallback, text: str) -> tuple[str, str]:
    try:
        return 'ok', callback.call(text)
    except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
        return type(exc).__name__, str(exc)


def both(tool: Callable[..., str], text: str) -> tuple[str, str]:
    """The outcome with the Rust decoder, asserted to be the one without it."""
    with_decoder, without = MethodToolCallback(tool), MethodToolCallback(tool)
    without._decoder = None
    got = outcome(with_decoder, text)
    assert outcome(without, text) == got, text
    return got


def pydantic_accepts(tool: Callable[..., str], text: str) -> bool:
    adapter = MethodToolCallback(tool)._schema.arguments
    assert adapter is not None
    try:
        adapter.validate_json(text)
    except pydantic.ValidationError:
        return False
    return True


NOT_INT = 'Input should be a valid integer, unable to parse string as an integer'
FINITE = 'Input should be a finite number'
DEEP_LIST = '[' * 99 + ']' * 99
DEEP_OBJECT = '{"k":' * 99 + '1' + '}' * 99


def invalid(tool: str, *problems: str) -> tuple[str, str]:
    return 'ToolExecutionError', f"Invalid arguments for tool '{tool}': " + '; '.join(problems)


@pytest.mark.parametrize(
    ('tool', 'text', 'expected'),
    [
        (with_any, '{"d": {"a": "x", "\\u0061": 2}, "note": 1}', invalid('with_any', f'd.a: {NOT_INT}')),
        (plain, '{"d": {"a": "x", "\\u0061": 2}, "n": 1}', invalid('plain', f'd.a: {NOT_INT}')),
        (plain, '{"d": {"\\ud83d\\ude00": "x", "\\ud83d\\ude00": 2}, "n": 1}', invalid('plain', f'd.😀: {NOT_INT}')),
        (required, '{"d": {"s": {"at": "x"}, "s": {"at": 1}}, "n": 1}', invalid('required', f'd.s.at: {NOT_INT}')),
        (rows, '{"r": [{"a": 1}, {"a": "x", "a": 1}], "n": 1}', invalid('rows', f'r.1.a: {NOT_INT}')),
        (typed, '{"t": {"counts": {"a": "x", "a": 1}}, "n": 1}', invalid('typed', f't.counts.a: {NOT_INT}')),
        (typed, '{"t": {"counts": {"a": "x"}, "counts": {"a": 1}}, "n": 1}', ('ok', "({'counts': {'a': 1}}, 1)")),
        (data, '{"c": {"counts": {"a": "x", "a": 1}}, "n": 1}', invalid('data', f'c.counts.a: {NOT_INT}')),
        (data, '{"c": {"counts": {"a": "x"}, "counts": {"a": 1}}, "n": 1}', ('ok', "(Dc(counts={'a': 1}), 1)")),
        (optional, '{"o": {"a": "x", "a": 1}, "n": 1}', invalid('optional', f'o.a: {NOT_INT}')),
        (
            union,
            '{"u": {"a": "x", "a": 1}, "n": 1}',
            invalid('union', 'u.int: Input should be a valid integer', f'u.dict[str,int].a: {NOT_INT}'),
        ),
        (plain, '{"d": {"a": -Infinity, "a": 2}, "n": NaN}', invalid('plain', f'd.a: {FINITE}', f'n: {FINITE}')),
        (with_any, '{"d": {"a": "x", "a": 2}, "note": ' + DEEP_LIST + '}', invalid('with_any', f'd.a: {NOT_INT}')),
        (with_any, '{"d": {"a": "x", "a": 2}, "note": ' + DEEP_OBJECT + '}', invalid('with_any', f'd.a: {NOT_INT}')),
        (
            with_any,
            '{"d": {"a": "x", "a": 2}, "note": "' + 'y' * 1_000_000 + '"}',
            invalid('with_any', f'd.a: {NOT_INT}'),
        ),
        # a repeated top-level parameter keeps its last value, as pydantic's arguments validation does
        (with_any, '{"d": {"a": "x", "a": 2}, "note": 1, "d": {"a": 3}}', ('ok', "({'a': 3}, 1)")),
        (with_any, '{"d": {"a": 3}, "note": 1, "d": {"a": "x", "a": 2}}', invalid('with_any', f'd.a: {NOT_INT}')),
        (with_any, '{"d": {"a": 2}, "note": {"z": "x", "z": 2}}', ('ok', "({'a': 2}, {'z': 2})")),
        # a left-out field that admits None is filled (README), in an earlier pair too
        (optional_field, '{"d": {"s": {}, "s": {"at": 1}}, "n": 1}', ('ok', "({'s': Opt(at=1)}, 1)")),
    ],
)
def test_repeated_keys_are_judged_as_pydantic(tool: Callable[..., str], text: str, expected: tuple[str, str]) -> None:
    assert both(tool, text) == expected
    if tool is not optional_field:  # the documented difference: the slow path fills a left-out nullable field
        assert (expected[0] == 'ok') is pydantic_accepts(tool, text)


@pytest.mark.parametrize(
    'text',
    [
        '{"d": {"a": "x", "a": 2}, "note": ' + '[' * 250 + ']' * 250 + '}',  # beyond the 200-level limit
        '{"d": {"a": "x", "a": 2}, "note": ' + '9' * 5000 + '}',  # beyond Python's 4300 digits
        '{"d": {"a": ' + '9' * 5000 + ', "a": 2}}',
        '{"d": {"\\ud800": "x", "\\ud800": 2}, "note": 1}',  # a lone surrogate
    ],
)
def test_texts_json_cannot_hold_are_refused_as_syntax(text: str) -> None:
    kind, message = both(with_any, text)
    assert kind == 'ToolExecutionError' and 'invalid tool arguments at line 1' in message
    assert not pydantic_accepts(with_any, text)


@pytest.mark.parametrize(
    'text',
    [
        '[' * 100_000 + ']' * 100_000,
        '{"d": ' + '{"k":' * 100_000 + '1' + '}' * 100_000 + '}',
        '{"d": {"a": ' + '9' * 5000 + ', "a": 1}}',
        '{"d": {"a": 1, "a": 2}, "e": ' + '[' * 5000 + '{"z": 1, "z": 2}' + ']' * 5000 + '}',
        '{"d": {"a": 1, "a": 2',
        '"x"',
        '{"d": {"a": NaN, "a": -Infinity}}',
    ],
)
def test_the_repeated_key_parse_never_raises(text: str) -> None:
    owners = repeated_key_owners(text)  # RecursionError / ValueError are caught: no owner named
    assert owners <= {'d', 'e'}


@pytest.mark.parametrize('depth', [100, 500, 900, 990])
def test_a_repeated_key_under_deep_arrays_is_found_without_recursion(depth: int) -> None:
    """``json`` reads arrays this deep; finding the mark below them once raised ``RecursionError`` out."""
    text = '{"d": {"a": 1, "a": 2}, "e": ' + '[' * depth + '{"z": 1, "z": 2}' + ']' * depth + '}'
    assert repeated_key_owners(text) == {'d', 'e'}


def test_the_repeated_key_parse_names_the_owners() -> None:
    assert repeated_key_owners('{"d": {"a": NaN, "a": 1}, "e": [[{"z": 1, "\\u007a": 2}]], "f": {"q": 1}}') == {
        'd',
        'e',
    }
    assert repeated_key_owners('{"d": 1, "d": {"a": 1}}') == set()


@pytest.mark.parametrize('tool', [required, required_any])
def test_an_earlier_pair_missing_a_required_field_is_refused(tool: Callable[..., str]) -> None:
    """Only a left-out field that admits None is filled; ``Req.at`` does not (it was accepted before the fix)."""
    text = '{"d": {"s": {}, "s": {"at": 1}}, "n": 1}' if tool is required else '{"d": {"s": {}, "s": {"at": 1}}}'
    assert not pydantic_accepts(tool, text)
    assert both(tool, text) == invalid(tool.__name__, 'd.s.at: Field required')


def test_a_missing_field_in_an_earlier_list_item_is_refused() -> None:
    text = '{"r": [{"s": {}, "s": {"at": 1}}, {"s": {"at": 2}}]}'
    assert not pydantic_accepts(listed, text)
    assert both(listed, text) == invalid('listed', 'r.0.s.at: Field required')
    assert both(listed, '{"r": [{"s": {"at": "x"}, "s": {"at": 1}}]}') == invalid('listed', f'r.0.s.at: {NOT_INT}')


# ------------------------------------------------------------------------------------------ 2. raw-schema wording


def _raw_calls(schema: dict[str, Any]) -> list[Callable[[str], Any]]:
    return [
        FunctionToolCallback.builder('raw', lambda d: repr(d)).input_schema(schema).build().call,
        mcp_decoder(ToolDefinition('raw', 'd', schema), schema, 'server'),
    ]


def _said(call: Callable[[str], Any], text: str) -> str:
    try:
        return f'ok {call(text)!r}'
    except Exception as exc:  # noqa: BLE001 - the message is what is compared
        return str(exc)


def _prop(schema: dict[str, Any], **defs: Any) -> dict[str, Any]:
    return {'type': 'object', 'properties': {'n': schema}, **({'$defs': defs} if defs else {})}


@pytest.mark.parametrize(
    ('schema', 'text', 'problems'),
    [
        (_prop({'type': 'integer', 'exclusiveMaximum': 9223372036854775807}), '{"n": 9223372036854775807}',
         ['/n: 9223372036854775807 is greater than or equal to the maximum of 9223372036854775807']),
        (_prop({'type': 'integer', 'maximum': 1e19}), '{"n": 1e19}', [f'/n: {OUT_OF_RANGE}']),
        (_prop({'type': 'integer', 'minimum': 0}), '{"n": -1e20}', ['/n: -1e+20 is less than the minimum of 0']),
        (_prop({'type': ['null', 'integer', 'string']}), '{"n": 1e20}', [f'/n: {OUT_OF_RANGE}']),
        (_prop({'$ref': '#/$defs/I'}, I={'type': 'integer'}), '{"n": -1e20}', [f'/n: {OUT_OF_RANGE}']),
        (_prop({'type': 'array', 'items': {'type': 'integer'}}), '{"n": [1, 1e20]}', [f'/n/1: {OUT_OF_RANGE}']),
        (_prop({'type': 'integer', 'multipleOf': 7}), '{"n": 1e20}',
         [f'/n: {OUT_OF_RANGE}', '/n: 1e+20 is not a multiple of 7']),
        (_prop({'anyOf': [{'type': 'integer'}, {'type': 'string'}]}), '{"n": 1e20}',
         ["/n: 1e+20 is not valid under any of the schemas listed in the 'anyOf' keyword"]),
        # conditions are left unbounded: no added bound named, and 1e20 is an integer for JSON Schema
        (_prop({'not': {'type': 'integer'}}), '{"n": 5}', ['/n: {"type":"integer"} is not allowed for 5']),
        (_prop({'not': {'type': 'integer'}}), '{"n": 1e20}', ['/n: {"type":"integer"} is not allowed for 1e+20']),
        ({'type': 'object', 'properties': {'n': {}}, 'if': {'properties': {'n': {'type': 'integer'}}},
          'then': {'required': ['z']}, 'else': {'required': ['e']}}, '{"n": 1e20}', ['/: "z" is a required property']),
    ],
)  # fmt: skip
def test_raw_schema_numbers_are_worded_right(schema: dict[str, Any], text: str, problems: list[str]) -> None:
    for call in _raw_calls(schema):
        assert _said(call, text) == "Invalid arguments for tool 'raw': " + '; '.join(problems)


def test_a_raw_number_beyond_64_bits_passes() -> None:
    for call in _raw_calls(_prop({'type': ['integer', 'number']})):
        assert 'ok' in _said(call, '{"n": 1e20}')


def test_a_number_fields_own_64_bit_maximum_is_not_worded_as_an_integer() -> None:
    for call in _raw_calls(_prop({'type': 'number', 'maximum': 9223372036854775807})):
        assert _said(call, '{"n": 1e20}') == (
            "Invalid arguments for tool 'raw': /n: 1e+20 is greater than the maximum of 9223372036854775807"
        )


@pytest.mark.parametrize(
    ('schema', 'text', 'problems'),
    [
        ({'type': 'integer', 'exclusiveMaximum': 100}, '{"n": 1e20}',
         ['/n: 1e+20 is greater than or equal to the maximum of 100']),
        ({'type': ['integer', 'null'], 'exclusiveMinimum': -100}, '{"n": -1e20}',
         ['/n: -1e+20 is less than or equal to the minimum of -100']),
        ({'type': 'integer', 'exclusiveMaximum': 1e30}, '{"n": 1e20}', [f'/n: {OUT_OF_RANGE}']),
    ],
)  # fmt: skip
def test_an_integer_beyond_its_own_exclusive_bound_is_named_once(
    schema: dict[str, Any], text: str, problems: list[str]
) -> None:
    """No 64-bit bound is added beside the schema's own exclusive bound inside it (1e20 was named twice)."""
    for call in _raw_calls(_prop(schema)):
        assert _said(call, text) == "Invalid arguments for tool 'raw': " + '; '.join(problems)


# ------------------------------------------------------------------------------------------ 4. model instances

T = TypeVar('T')


class Box(pydantic.BaseModel, Generic[T]):
    item: T


class Frozen(pydantic.BaseModel, frozen=True):
    x: int


class DynamicGet(pydantic.BaseModel):
    x: int

    def __getattr__(self, name: str) -> str:
        return f'dyn-{name}'


STORES: list[str] = []


class Watched(pydantic.BaseModel):
    x: int

    def __setattr__(self, name: str, value: Any) -> None:
        STORES.append(name)
        super().__setattr__(name, value)


class Mixin:
    __slots__ = ()

    def hello(self) -> str:
        return 'hi'


class Left(pydantic.BaseModel):
    a: int = 0


class Right(pydantic.BaseModel):
    b: int = 0


class Mixed(Mixin, Left):
    c: int


class Diamond(Left, Right):
    c: int


class WithClassVar(pydantic.BaseModel):
    x: int
    k: ClassVar[int] = 3


class Cached(pydantic.BaseModel):
    x: int

    @functools.cached_property
    def double(self) -> int:
        return self.x * 2


class Meta(type(pydantic.BaseModel)):  # type: ignore[misc]
    pass


class WithMeta(pydantic.BaseModel, metaclass=Meta):
    x: int


MODELS = [
    (Box[int], '{"item": 3}'),
    (Box, '{"item": [1, "x"]}'),
    (Frozen, '{"x": 1}'),
    (DynamicGet, '{"x": 1}'),
    (Watched, '{"x": 1}'),
    (Mixed, '{"c": 1, "a": 2}'),
    (Diamond, '{"c": 1, "b": 3, "a": 2}'),
    (WithClassVar, '{"x": 1}'),
    (Cached, '{"x": 2}'),
    (WithMeta, '{"x": 1}'),
    (dict[str, list[Diamond]], '{"k": [{"c": 1}, {"c": 2, "a": 5}]}'),  # the decoder reads JSON objects only
]


@pytest.mark.parametrize(('tp', 'text'), MODELS, ids=lambda v: getattr(v, '__name__', str(v)))
def test_model_instances_are_pydantics(tp: Any, text: str) -> None:
    adapter = pydantic.TypeAdapter(tp)
    rust, twin = RustDecoder.build(adapter.core_schema), TwinDecoder.build(adapter.core_schema)
    assert rust is not None and twin is not None
    want = adapter.validate_json(text)
    STORES.clear()
    got = rust.decode(text)
    assert STORES == []  # the model's __setattr__ is not called, as pydantic-core does not call it
    assert_same(got, want)
    assert_same(twin.decode(text), want)


def test_instances_behave_as_pydantics() -> None:
    frozen, want = RustDecoder.build(pydantic.TypeAdapter(Frozen).core_schema).decode('{"x": 1}'), Frozen(x=1)
    assert hash(frozen) == hash(want) and frozen == want
    with pytest.raises(pydantic.ValidationError):
        frozen.x = 2
    dynamic = RustDecoder.build(pydantic.TypeAdapter(DynamicGet).core_schema).decode('{"x": 1}')
    assert dynamic.missing == 'dyn-missing' and dynamic.x == 1
    cached = RustDecoder.build(pydantic.TypeAdapter(Cached).core_schema).decode('{"x": 2}')
    assert cached.double == 4 and cached.__dict__ == {'x': 2, 'double': 4}
    mixed = RustDecoder.build(pydantic.TypeAdapter(Mixed).core_schema).decode('{"c": 1}')
    assert mixed.hello() == 'hi' and mixed.model_dump() == {'a': 0, 'c': 1}


class Private(pydantic.BaseModel):
    x: int
    _p: int = pydantic.PrivateAttr(default=5)


class PostInit(pydantic.BaseModel):
    x: int

    def model_post_init(self, context: Any, /) -> None:
        object.__setattr__(self, 'seen', True)


class Allowing(pydantic.BaseModel, extra='allow'):
    x: int


class OwnNew(pydantic.BaseModel):
    x: int

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        return super().__new__(cls)


@pytest.mark.parametrize(
    'tp', [Private, PostInit, Allowing, OwnNew, pydantic.RootModel[list[int]]], ids=lambda v: v.__name__
)
def test_models_outside_the_subset_are_left_to_pydantic(tp: Any) -> None:
    schema = pydantic.TypeAdapter(tp).core_schema
    assert RustDecoder.build(schema) is None and TwinDecoder.build(schema) is None


def test_a_class_redefined_after_the_plan_keeps_the_planned_class() -> None:
    namespace: dict[str, Any] = {}
    exec('import pydantic\nclass Re(pydantic.BaseModel):\n    x: int', namespace)  # noqa: S102
    old = namespace['Re']
    decoder = RustDecoder.build(pydantic.TypeAdapter(old).core_schema)
    exec('class Re(pydantic.BaseModel):\n    x: str', namespace)  # noqa: S102
    got = decoder.decode('{"x": 1}')
    assert type(got) is old and got.x == 1
    assert_same(got, pydantic.TypeAdapter(old).validate_json('{"x": 1}'))


def test_threads_build_instances_alike() -> None:
    adapter = pydantic.TypeAdapter(dict[str, list[Diamond]])
    decoder = RustDecoder.build(adapter.core_schema)
    text = '{"k": [' + ', '.join(f'{{"c": {i}, "a": {i * 2}}}' for i in range(200)) + ']}'
    want = adapter.validate_json(text)
    failures: list[BaseException] = []
    done: list[int] = []

    def work() -> None:
        try:
            for _ in range(50):
                got = decoder.decode(text)
                assert got is not None
                assert_same(got, want)
            done.append(1)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    run_threads([threading.Thread(target=work) for _ in range(8)])
    assert failures == [] and len(done) == 8


def test_building_instances_leaks_no_reference() -> None:
    """The slots are stored through the member descriptor's setter: no reference to None or the class is kept
    or lost per instance (``sys.getrefcount`` does not move between two rounds of many decodes)."""
    decoder = RustDecoder.build(pydantic.TypeAdapter(dict[str, list[Diamond]]).core_schema)
    text = '{"k": [{"c": 1}, {"c": 2, "a": 5}]}'

    def counts_after(rounds: int) -> tuple[int, int]:
        for _ in range(rounds):
            got = decoder.decode(text)
            assert got['k'][1].__pydantic_fields_set__ == {'c', 'a'}
        gc.collect()
        return sys.getrefcount(None), sys.getrefcount(Diamond)

    first = counts_after(1_000)  # warm: whatever is cached once is cached now
    assert counts_after(20_000) == first == counts_after(5_000)


_FIELD_VALUES = st.sampled_from(
    ['{}', '{"at": null}', '{"at": 1}', '{"at": "x"}', '{"at": 1, "at": "y"}', '{"at": "y", "at": 2}', '[]', 'null']
)
_FIELD_PAIRS = st.lists(st.tuples(st.sampled_from(['s', 't']), _FIELD_VALUES), max_size=4).map(
    lambda pairs: '{' + ', '.join(f'"{key}": {value}' for key, value in pairs) + '}'
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(d=_FIELD_PAIRS, rest=st.sampled_from(['', ', "n": 1', ', "n": "q"']))
def test_missing_fields_in_repeated_pairs_are_judged_as_pydantic(d: str, rest: str) -> None:
    text = '{"d": ' + d + rest + '}'
    assert (both(required, text)[0] == 'ok') is pydantic_accepts(required, text)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(items=st.lists(_FIELD_PAIRS, max_size=3), note=st.sampled_from(['', ', "note": 1']))
def test_missing_fields_in_repeated_pairs_of_list_items_are_judged_as_pydantic(items: list[str], note: str) -> None:
    text = '{"r": [' + ', '.join(items) + ']' + note + '}'
    assert (both(listed, text)[0] == 'ok') is pydantic_accepts(listed, text)
