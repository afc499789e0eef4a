"""``ArgumentDecoder`` (twin and Rust) against pydantic itself: a non-None decode is exactly ``validate_json``'s result.

Shapes are built at run time (models, TypedDicts, enums, literals, optionals, lists, dicts, defaults,
aliases, recursive types); texts are valid, near-valid (wrong types, digit strings, floats for ints,
big ints, duplicate keys, extra and missing keys, lone surrogates). Compared: value, type tree, enum
identity, ``__dict__`` order, ``model_fields_set``, extras, private; plainly valid texts must decode.
"""

from __future__ import annotations

import enum
import json
import math
import os
import subprocess
import sys
from typing import Annotated, Any, ClassVar, Literal, Optional

import pydantic
import pytest
import toolweave._core as core
import toolweave.tools.method as method_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolweave._reference import ArgumentDecoder as TwinDecoder
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback
from typing_extensions import TypedDict

INT64 = 2**63


class Color(str, enum.Enum):
    RED = 'red'
    GREEN = 'green'
    CRIMSON = 'red'  # noqa: PIE796 - an alias: pydantic gives the canonical member


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Tree(pydantic.BaseModel):
    label: str
    children: list[Tree] = []


class TreeDict(TypedDict):
    name: str
    kids: list[TreeDict]


def _rust_ready() -> bool:
    decoder = getattr(core, 'ArgumentDecoder', None)
    return decoder is not None and decoder.build(pydantic.TypeAdapter(list[int]).core_schema) is not None


IMPLS = [
    pytest.param(TwinDecoder, id='twin'),
    pytest.param(
        getattr(core, 'ArgumentDecoder', None),
        id='rust',
        marks=pytest.mark.skipif(not _rust_ready(), reason='the Rust ArgumentDecoder is still a skeleton'),
    ),
]

# ------------------------------------------------------------------------------------------ shapes and values

LEAVES: list[tuple[Any, Any]] = [
    (str, st.text(max_size=8)),
    (int, st.integers(-(2**40), 2**40)),
    (float, st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=64), st.integers(-1000, 1000))),
    (bool, st.booleans()),
    (type(None), st.none()),
    (
        Any,
        st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(-100, 100), st.text(max_size=4)),
            lambda inner: st.lists(inner, max_size=3),
            max_leaves=5,
        ),
    ),
    (Literal['a', 'b', 1, True, None], st.sampled_from(['a', 'b', 1, True, None])),  # noqa: PYI061 - None among the expected values
    (Literal[Color.RED, 'x'], st.sampled_from(['red', 'x'])),
    (Literal[Level.LOW, 2], st.sampled_from([1, 2])),
    (Color, st.sampled_from(['red', 'green'])),
    (Level, st.sampled_from([1, 2])),
    (Annotated[int, pydantic.Field(ge=0, le=10, multiple_of=2)], st.integers(-2, 12)),
    (Annotated[float, pydantic.Field(gt=-1.5, lt=1e6)], st.floats(-2, 2)),
    (Annotated[str, pydantic.Field(min_length=1, max_length=3)], st.text(max_size=4)),
]

NAMES = ['alpha', 'beta', 'gamma', 'delta']
_counter = iter(range(10**9))


def _shape(depth: int) -> st.SearchStrategy[tuple[Any, st.SearchStrategy[Any]]]:
    """``(annotation, strategy of JSON values mostly valid for it)``."""
    leaves = st.sampled_from(LEAVES)
    if depth <= 0:
        return leaves
    inner = _shape(depth - 1)
    return st.one_of(
        leaves,
        inner.map(lambda pair: (list[pair[0]], st.lists(pair[1], max_size=3))),  # type: ignore[misc]
        inner.map(
            lambda pair: (dict[str, pair[0]], st.dictionaries(st.sampled_from(['k', 'k:2', 'z']), pair[1], max_size=3))
        ),  # type: ignore[misc]
        inner.map(lambda pair: (Optional[pair[0]], st.one_of(st.none(), pair[1]))),
        st.just((Tree, _tree_values())),
        st.just((TreeDict, _tree_dict_values())),
        _record(inner),
    )


def _tree_values() -> st.SearchStrategy[Any]:
    return st.recursive(
        st.builds(lambda label: {'label': label}, st.text(max_size=3)),
        lambda inner: st.builds(
            lambda label, kids: {'label': label, 'children': kids}, st.text(max_size=3), st.lists(inner, max_size=2)
        ),
        max_leaves=4,
    )


def _tree_dict_values() -> st.SearchStrategy[Any]:
    return st.recursive(
        st.builds(lambda name: {'name': name, 'kids': []}, st.text(max_size=3)),
        lambda inner: st.builds(
            lambda name, kids: {'name': name, 'kids': kids}, st.text(max_size=3), st.lists(inner, max_size=2)
        ),
        max_leaves=4,
    )


@st.composite
def _record(draw: st.DrawFn, inner: st.SearchStrategy[tuple[Any, Any]]) -> tuple[Any, Any]:
    """A model or TypedDict made now: fields required or with a default (mutable, factory), maybe aliased."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    fields = [
        (name, *draw(inner), draw(st.sampled_from(['required', 'none', 'list', 'factory', 'alias']))) for name in names
    ]
    extra = draw(st.sampled_from(['forbid', 'ignore', 'allow']))
    key_of = {name: (f'{name}_in' if how == 'alias' else name) for name, _, _, how in fields}
    if draw(st.booleans()):
        definitions: dict[str, Any] = {}
        for name, tp, _, how in fields:
            if how == 'none':
                definitions[name] = (Optional[tp], None)
            elif how == 'list':
                definitions[name] = (Any, [1, {'x': [2]}])
            elif how == 'factory':
                definitions[name] = (Any, pydantic.Field(default_factory=lambda: {'made': [1]}))
            elif how == 'alias':
                definitions[name] = (tp, pydantic.Field(alias=key_of[name]))
            else:
                definitions[name] = (tp, ...)
        extra = 'forbid' if extra == 'allow' else extra
        cls: Any = pydantic.create_model(
            f'M{next(_counter)}', __config__=pydantic.ConfigDict(extra=extra), **definitions
        )
        required = {name for name, _, _, how in fields if how in ('required', 'alias')}
    else:
        annotations = {name: (tp if how in ('required', 'alias') else Optional[tp]) for name, tp, _, how in fields}
        total = draw(st.booleans())
        cls = TypedDict(f'T{next(_counter)}', annotations, total=total)  # type: ignore[operator]
        cls.__pydantic_config__ = pydantic.ConfigDict(extra=extra)
        key_of = {name: name for name in names}
        required = set(names) if total else set()
    values = {name: strategy for name, _, strategy, _ in fields}

    @st.composite
    def member_values(draw: st.DrawFn) -> dict[str, Any]:
        out = {}
        for name in names:
            if name in required or draw(st.booleans()):
                out[key_of[name]] = draw(values[name])
        return out

    return cls, member_values()


# ------------------------------------------------------------------------------------------ texts and comparison

NEAR = st.one_of(
    st.text(alphabet='0123456789', min_size=1, max_size=3),
    st.sampled_from([3.0, 1.5, INT64, -INT64 - 1, 10**30, True, False, None, '', 'red', 'x', 1e308, [], {}]),
)


def _texts(value: Any, draw: st.DrawFn, mutate: bool) -> str:
    top = {'arg': value}
    if mutate:
        kinds = ['wrong', 'extra', 'missing', 'duplicate', 'surrogate', 'plain', 'nested extra', 'nested duplicate']
        kind = draw(st.sampled_from(kinds))
        if kind == 'wrong':
            top['arg'] = _replace_somewhere(value, draw(NEAR), draw)
        elif kind == 'extra':
            top['other'] = draw(NEAR)
        elif kind == 'missing':
            top.pop('arg')
        elif kind == 'nested extra':
            top['arg'] = _replace_somewhere(value, None, draw, extra=draw(NEAR))
        text = json.dumps(top, ensure_ascii=draw(st.booleans()))
        if kind == 'nested duplicate' and '{"' in text[1:]:  # a member before the first one of an inner object
            at = text.index('{"', 1)
            return text[: at + 1] + '"k": ' + json.dumps(draw(NEAR)) + ', ' + text[at + 1 :]
        if kind == 'duplicate':
            return '{"arg": ' + json.dumps(draw(NEAR)) + ', ' + text[1:]
        if kind == 'surrogate':
            return text.replace('"arg"', '"a\\ud800rg"', 1)
        return text
    return json.dumps(top, ensure_ascii=draw(st.booleans()))


def _replace_somewhere(value: Any, new: Any, draw: st.DrawFn, extra: Any = None) -> Any:
    """``value`` with one inner value replaced by ``new`` (or, given ``extra``, one inner object extended by it)."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: _replace_somewhere(value[key], new, draw, extra)}
    if isinstance(value, list) and value and draw(st.booleans()):
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], _replace_somewhere(value[at], new, draw, extra), *value[at + 1 :]]
    if extra is not None:
        return {**value, 'zzz': extra} if isinstance(value, dict) else value
    return new


def assert_same(got: Any, want: Any, where: str = '$') -> None:
    """Equal in value and in type at every level; enum members identical; models field by field."""
    assert type(got) is type(want), f'{where}: {type(got).__name__} vs {type(want).__name__}'
    if isinstance(want, enum.Enum):
        assert got is want, where
    elif isinstance(want, pydantic.BaseModel):
        assert list(got.__dict__) == list(want.__dict__), where
        for key in want.__dict__:
            assert_same(got.__dict__[key], want.__dict__[key], f'{where}.{key}')
        assert got.model_fields_set == want.model_fields_set, where
        assert type(got.__pydantic_fields_set__) is type(want.__pydantic_fields_set__), where
        assert got.__pydantic_extra__ == want.__pydantic_extra__, where
        assert got.__pydantic_private__ == want.__pydantic_private__, where
    elif isinstance(want, dict):
        assert list(got) == list(want), where
        for key in want:
            assert_same(got[key], want[key], f'{where}.{key}')
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same(a, b, f'{where}[{i}]')
    elif isinstance(want, float):
        assert got == want or (math.isnan(got) and math.isnan(want)), where
    else:
        assert got == want, where


def _numbers_fine(value: Any) -> bool:
    if type(value) is int:
        return -INT64 <= value < INT64
    if type(value) is float:
        return math.isfinite(value)
    if isinstance(value, pydantic.BaseModel):
        return all(map(_numbers_fine, value.__dict__.values()))
    if isinstance(value, dict):
        return all(map(_numbers_fine, value.values()))
    if isinstance(value, list):
        return all(map(_numbers_fine, value))
    return True


@st.composite
def cases(draw: st.DrawFn, mutate: bool) -> tuple[Any, str]:
    tp, values = draw(_shape(2))
    arguments = TypedDict(f'Args{next(_counter)}', {'arg': tp})  # type: ignore[operator]  # noqa: UP013
    arguments.__pydantic_config__ = pydantic.ConfigDict(extra='forbid')
    return pydantic.TypeAdapter(arguments), _texts(draw(values), draw, mutate)


def _differential(decoder_class: Any, adapter: pydantic.TypeAdapter[Any], text: str) -> bool | None:
    """Check one case; ``True``: decoded, ``False``: pydantic accepts with fine numbers but decode said None."""
    decoder = decoder_class.build(adapter.core_schema)
    assert decoder is not None, adapter.core_schema
    got = decoder.decode(text)
    try:
        want = adapter.validator.validate_json(text)
    except pydantic.ValidationError:
        assert got is None, text
        return None
    if not _numbers_fine(want):
        assert got is None, text
        return None
    if got is None:
        return False
    assert_same(got, want)
    return True


FAST = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize('decoder_class', IMPLS)
@FAST
@given(case=cases(mutate=True))
def test_decode_is_validate_json_or_none(decoder_class: Any, case: tuple[Any, str]) -> None:
    _differential(decoder_class, *case)


HITS: dict[str, list[bool]] = {}


@pytest.mark.parametrize('decoder_class', IMPLS)
def test_plainly_valid_arguments_decode(decoder_class: Any) -> None:
    outcomes: list[bool] = []

    @FAST
    @given(case=cases(mutate=False))
    def run(case: tuple[Any, str]) -> None:
        outcome = _differential(decoder_class, *case)
        if outcome is not None:
            outcomes.append(outcome)

    run()
    assert len(outcomes) >= 100
    rate = sum(outcomes) / len(outcomes)
    assert rate >= 0.97, f'decoded {rate:.0%} of plainly valid arguments'


# ------------------------------------------------------------------------------------------ pinned cases


@pytest.mark.parametrize('decoder_class', IMPLS)
@pytest.mark.parametrize(
    ('tp', 'text'),
    [
        (int, '{"arg": "3"}'),  # pydantic's lax coercion: left to it
        (int, '{"arg": 3.0}'),
        (int, '{"arg": true}'),
        (int, '{"arg": 9223372036854775808}'),
        (float, '{"arg": 1e400}'),
        (Literal[1], '{"arg": true}'),
        (Literal[True], '{"arg": 1}'),
        (dict[str, int], '{"arg": {"a": "x", "a": 1}}'),  # pydantic validates both pairs
        (str, '{"arg": "\\ud800"}'),
        (str, ''),
        (str, '{"arg": "a", "arg": "b"}'),
    ],
)
def test_unsure_or_invalid_gives_none(decoder_class: Any, tp: Any, text: str) -> None:
    decoder = decoder_class.build(pydantic.TypeAdapter(TypedDict('A', {'arg': tp})).core_schema)  # type: ignore[operator]
    assert decoder is not None
    if text == '{"arg": "a", "arg": "b"}':  # last wins in both parsers: decoded
        assert decoder.decode(text) == {'arg': 'b'}
    else:
        assert decoder.decode(text) is None


@pytest.mark.parametrize('decoder_class', IMPLS)
def test_literal_and_enum_members_are_pydantics(decoder_class: Any) -> None:
    adapter = pydantic.TypeAdapter(TypedDict('E', {'c': Color, 'l': Literal[Color.RED, 'x'], 'n': Level}))  # type: ignore[operator]
    decoder = decoder_class.build(adapter.core_schema)
    got = decoder.decode('{"c": "red", "l": "red", "n": 2}')
    assert got['c'] is Color.RED and got['l'] is Color.RED and got['n'] is Level.HIGH
    assert_same(got, adapter.validate_json('{"c": "red", "l": "red", "n": 2}'))


@pytest.mark.parametrize('decoder_class', IMPLS)
def test_build_refuses_what_it_cannot_be_sure_of(decoder_class: Any) -> None:
    class Checked(pydantic.BaseModel):
        a: int

        @pydantic.field_validator('a')
        @classmethod
        def positive(cls, value: int) -> int:
            return value

    for tp in (Checked, int | str, tuple[int, int], set[int], Annotated[str, pydantic.Field(pattern='a')]):
        assert decoder_class.build(pydantic.TypeAdapter(tp).core_schema) is None, tp
    for junk in ({}, {'type': 'nope'}, {'type': 'str', 'strip_whitespace': True}, {'type': 'list', 'items_schema': 3}):
        assert decoder_class.build(junk) is None
    assert decoder_class.build({'type': 'str'}).decode('not json') is None


class WithDefaults(pydantic.BaseModel):
    tags: list[str] = []
    meta: dict[str, int] = {'a': 1}
    frozen: Optional[str] = 'kept as it is'
    made: list[int] = pydantic.Field(default_factory=lambda: _made())


CALLS: list[int] = []


def _made() -> list[int]:
    CALLS.append(1)
    return [len(CALLS)]


@pytest.mark.parametrize('decoder_class', IMPLS)
def test_mutable_defaults_are_copied_and_factories_run_once(decoder_class: Any) -> None:
    decoder = decoder_class.build(pydantic.TypeAdapter(WithDefaults).core_schema)
    CALLS.clear()
    first, second = decoder.decode('{}'), decoder.decode('{}')
    assert len(CALLS) == 2 and first.made == [1] and second.made == [2]  # once per accepted call
    assert first.tags == [] and first.tags is not second.tags  # with_default.rs: unhashable -> deepcopy
    assert first.meta == {'a': 1} and first.meta is not second.meta
    assert first.frozen is WithDefaults.model_fields['frozen'].default  # hashable: the default itself
    assert first.model_fields_set == set()
    CALLS.clear()
    assert decoder.decode('{"tags": 1}') is None and CALLS == []  # refused before anything is built


class Private(pydantic.BaseModel):
    a: int
    _secret: int = 3  # a post-init sets the private attributes


class Stripped(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(str_strip_whitespace=True)
    a: str


class ByName(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(validate_by_name=True)
    a: int = pydantic.Field(alias='b')


class StrictField(pydantic.BaseModel):
    a: int = pydantic.Field(strict=True)


class Fallback(enum.Enum):
    X = 'x'

    @classmethod
    def _missing_(cls, value: object) -> Fallback:
        return cls.X


@pytest.mark.parametrize('decoder_class', IMPLS)
@pytest.mark.parametrize('tp', [Private, Stripped, ByName, StrictField, Fallback])
def test_build_refuses_configs_and_hooks_that_change_results(decoder_class: Any, tp: Any) -> None:
    assert decoder_class.build(pydantic.TypeAdapter(tp).core_schema) is None


class Inner(pydantic.BaseModel):
    values: list[int] = [1]


class Outer(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True)
    inner: Inner = Inner()
    renamed: int = pydantic.Field(default=0, alias='in_json')


@pytest.mark.parametrize('decoder_class', IMPLS)
def test_model_defaults_and_aliases_as_pydantic(decoder_class: Any) -> None:
    adapter = pydantic.TypeAdapter(Outer)
    decoder = decoder_class.build(adapter.core_schema)
    first, second = decoder.decode('{"in_json": 5}'), decoder.decode('{}')
    assert_same(first, adapter.validate_json('{"in_json": 5}'))
    assert_same(second, adapter.validate_json('{}'))
    assert first.inner is not second.inner and first.inner is not Outer.model_fields['inner'].default  # unhashable
    assert first.model_fields_set == {'renamed'} and first.renamed == 5
    ignored = decoder.decode('{"renamed": 5}')  # the field's name is not its JSON key: an extra, ignored
    assert_same(ignored, adapter.validate_json('{"renamed": 5}'))
    assert ignored.renamed == 0


class Spy:
    """A decoder class that records what the tool's decoder answered."""

    answers: ClassVar[list[Any]] = []
    certain: ClassVar[list[Any]] = []

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.typed_dict_factories = inner.typed_dict_factories

    @classmethod
    def build(cls, core_schema: Any) -> Spy | None:
        inner = TwinDecoder.build(core_schema)
        return None if inner is None else cls(inner)

    def decode(self, text: str) -> Any:
        answer = self.inner.decode(text)
        Spy.answers.append(answer)
        return answer

    def errors(self, text: str) -> Any:
        certain = self.inner.errors(text)
        Spy.certain.append(certain)
        return certain


class Refuse:
    def validate_json(self, text: str) -> Any:
        raise AssertionError('pydantic was asked although the decoder decoded')


def order(tree: Tree, sizes: list[int], level: Level = Level.LOW, note: Optional[str] = None) -> str:
    return f'{tree.label}:{len(tree.children)}:{sizes}:{level.name}:{note}'


def test_method_tool_decodes_valid_arguments_without_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(method_module, '_DECODER', Spy)
    Spy.answers.clear()
    tool = MethodToolCallback(order)
    valid = '{"tree": {"label": "a", "children": [{"label": "b"}]}, "sizes": [1, 2], "level": 2}'
    assert tool.call(valid) == 'a:1:[1, 2]:HIGH:None'  # the default of `note` filled as before
    assert Spy.answers[-1] is not None
    monkeypatch.setitem(tool._schema.__dict__, 'checked_arguments', Refuse())  # cached: pydantic's step
    monkeypatch.setitem(tool._schema.__dict__, 'arguments', Refuse())
    monkeypatch.setattr(method_module, 'number_problems', Refuse().validate_json)  # and the numbers walk
    assert tool.call(valid) == 'a:1:[1, 2]:HIGH:None'


def test_method_tool_answers_as_before_when_the_decoder_is_unsure(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {}
    for decoder in (None, Spy):
        monkeypatch.setattr(method_module, '_DECODER', decoder)
        Spy.answers.clear()
        tool = MethodToolCallback(order)
        lax = '{"tree": {"label": "a"}, "sizes": ["1"], "level": "2"}'  # pydantic's lax coercions
        big = '{"tree": {"label": "a"}, "sizes": [9223372036854775808]}'
        bad = '{"tree": {"label": 1}, "sizes": [], "other": 1}'
        outcomes = [tool.call(lax)]
        for text in (big, bad, '{"tree": '):
            with pytest.raises(ToolExecutionError) as info:
                tool.call(text)
            outcomes.append(str(info.value))
        assert all(answer is None for answer in Spy.answers)
        assert all(certain is None for certain in Spy.certain[:2])  # the lax call, the number beyond the rule
        expected[decoder] = outcomes
    assert expected[None] == expected[Spy]
    assert expected[None][0] == 'a:0:[1]:HIGH:None'
    assert 'sizes.0: ' in expected[None][1] and "unexpected argument 'other'" in expected[None][2]


def checkout(tree: Tree, sizes: list[int], express: bool, weight: float, items: list[TreeDict]) -> str:
    return 'ok'


def _invalid_answers(decoder: Any, texts: list[str]) -> list[str]:
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(method_module, '_DECODER', decoder)
    try:
        tool = MethodToolCallback(checkout)
        answers = []
        for text in texts:
            with pytest.raises(ToolExecutionError) as info:
                tool.call(text)
            answers.append(str(info.value))
        return answers
    finally:
        monkeypatch.undo()


GOOD_CHECKOUT = {
    'tree': {'label': 'a'},
    'sizes': [1],
    'express': True,
    'weight': 1.5,
    'items': [{'name': 'b', 'kids': []}],
}
WRONG_CHECKOUTS = [
    {'sizes': ['one']},
    {'sizes': [1, 2.5], 'express': 'maybe', 'weight': 'heavy'},
    {'tree': {'label': None}, 'items': [{'name': 'b', 'kids': 'x'}]},
    {'tree': [], 'sizes': {}, 'express': 3, 'weight': None, 'items': [7]},
    {'tree': {}, 'zz': 1},
    {'items': [{'name': 'b', 'kids': [{'name': 'c', 'kids': [{'name': None}]}]}]},
    {'sizes': ['one'], 'weight': 1e300, 'express': 0},
    {'express': 'maybe', 'sizes': [2**70]},  # a number pydantic takes and the rule refuses, beside an error
]
LEFT_OUT = [  # parameters left out, as a model forgets them (a left-out parameter or field is certain: no None)
    {k: v for k, v in GOOD_CHECKOUT.items() if k != 'sizes'},
    {**{k: v for k, v in GOOD_CHECKOUT.items() if k not in ('tree', 'weight')}, 'express': 'maybe'},
    {**GOOD_CHECKOUT, 'items': [{'kids': []}, {'name': 'x'}]},
]


def test_method_tool_answers_invalid_calls_from_the_decoders_errors_as_from_pydantics() -> None:
    """The decoder's certain errors replace pydantic's step: the same answer, word for word, as without a decoder."""
    texts = [json.dumps({**GOOD_CHECKOUT, **change}) for change in WRONG_CHECKOUTS]
    Spy.certain.clear()
    with_errors = _invalid_answers(Spy, texts)
    assert with_errors == _invalid_answers(None, texts)
    # certain but for the last two: 0 for a bool and 2**70 for an int are pydantic's to take
    assert [certain is not None for certain in Spy.certain] == [True] * 6 + [False] * 2, Spy.certain
    assert 'sizes.0: Input should be a valid integer, unable to parse string as an integer' in with_errors[0]
    assert 'sizes.0: Input should be an integer between -2**63 and 2**63 - 1' in with_errors[-1]
    if _rust_ready():
        assert _invalid_answers(core.ArgumentDecoder, texts) == with_errors


def test_left_out_arguments_are_answered_from_the_decoders_errors_as_before() -> None:
    texts = [json.dumps(arguments) for arguments in LEFT_OUT]
    Spy.certain.clear()
    answers = _invalid_answers(Spy, texts)
    assert answers == _invalid_answers(None, texts)
    assert all(certain is not None for certain in Spy.certain), Spy.certain
    assert answers[0] == "Invalid arguments for tool 'checkout': sizes: missing required argument"
    assert answers[1] == (
        "Invalid arguments for tool 'checkout': tree: missing required argument; express: Input should be a valid "
        'boolean, unable to interpret input; weight: missing required argument'
    )
    assert answers[2] == (
        "Invalid arguments for tool 'checkout': items.0.name: Field required; items.1.kids: Field required"
    )
    if _rust_ready():
        assert _invalid_answers(core.ArgumentDecoder, texts) == answers


class Note(TypedDict):
    text: str
    pinned: Optional[bool]


def annotate(notes: list[Note], owner: Optional[str]) -> str:
    return repr((notes, owner))


def test_a_left_out_field_that_takes_none_is_still_filled() -> None:
    """The tool's own rule (README): such a field, or parameter, is filled with ``None``; the decoder has no answer."""
    text = '{"notes": [{"text": "a"}]}'
    for decoder in (Spy, None) + ((core.ArgumentDecoder,) if _rust_ready() else ()):
        monkeypatch = pytest.MonkeyPatch()
        monkeypatch.setattr(method_module, '_DECODER', decoder)
        try:
            assert MethodToolCallback(annotate).call(text) == "([{'text': 'a', 'pinned': None}], None)"
        finally:
            monkeypatch.undo()
    assert TwinDecoder.build(MethodToolCallback(annotate)._schema.arguments.core_schema).errors(text) is None


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    changes=st.lists(
        st.tuples(
            st.sampled_from(sorted(GOOD_CHECKOUT)),
            st.sampled_from(
                ['one', '', 'yes', 'x', 1.5, 2, 0, None, [], {}, [1, 'a'], {'label': 3}, [{'name': 1}], [{'kids': [1]}]]
                + ['drop', {}, [{}], [{'kids': []}]]
            ),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_method_tool_answers_random_invalid_calls_as_without_the_decoder(changes: list[tuple[str, Any]]) -> None:
    arguments = {**GOOD_CHECKOUT, **dict(changes)}
    text = json.dumps({key: value for key, value in arguments.items() if value != 'drop'})
    tool = MethodToolCallback(checkout)
    try:
        tool.call(text)
    except ToolExecutionError:
        pass
    else:
        return  # the changes left it valid
    want = _invalid_answers(None, [text])
    assert _invalid_answers(Spy, [text]) == want
    if _rust_ready():
        assert _invalid_answers(core.ArgumentDecoder, [text]) == want


def test_pure_core_runs_pydantics_step() -> None:
    """The twin is the oracle, not a fast path: ``TOOLWEAVE_PURE=1`` keeps pydantic's one step."""
    code = 'import toolweave.tools.method as m; print(m._DECODER)'
    env = {**os.environ, 'TOOLWEAVE_PURE': '1'}
    assert (
        subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True).stdout
        == 'None\n'
    )


SCHEMA_WORDS = ['type', 'schema', 'str', 'int', 'list', 'dict', 'typed-dict', 'model', 'fields', 'items_schema']
SCHEMA_WORDS += [
    'definitions',
    'definition-ref',
    'schema_ref',
    'ref',
    'a',
    'nullable',
    'default',
    'literal',
    'expected',
]
junk_schemas = st.recursive(
    st.one_of(st.sampled_from(SCHEMA_WORDS), st.integers(), st.none(), st.booleans()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(SCHEMA_WORDS), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.mark.parametrize('decoder_class', IMPLS)
@FAST
@given(schema=junk_schemas, text=st.one_of(st.text(max_size=30), st.sampled_from(['{}', '{"a": []}', '{"a": "x"}'])))
def test_build_and_decode_never_raise(decoder_class: Any, schema: Any, text: str) -> None:
    decoder = decoder_class.build(schema)
    if decoder is not None:
        decoder.decode(text)
    decoded = decoder_class.build({'type': 'any'}).decode(text)
    assert decoded is None or decoded == json.loads(text)


class Stamped(TypedDict, total=False):
    label: str
    reading: Annotated[Any, pydantic.Field(default_factory=lambda: STAMPED.pop())]


STAMPED: list[Any] = []


def stamped(s: Stamped) -> str:
    return repr(s.get('reading'))


@pytest.mark.parametrize('made', [math.nan, 2**70, [math.inf], 1.5])
@pytest.mark.parametrize('decoder', [True, False])
def test_a_typed_dict_factory_result_is_judged_by_the_tool_as_without_the_decoder(decoder: bool, made: Any) -> None:
    # The decoder hands a typed dict's factory result over unjudged (typed_dict_factories); the tool judges
    # it as it judges validate_json's: a number problem sends the call to the slow path, which does not judge
    # a value the input did not set. Every answer is the one without the decoder, the factory called no more.
    tool = MethodToolCallback(stamped)
    if not decoder:
        tool._decoder = None
    STAMPED[:] = [made] * 3
    assert tool.call('{"s": {"label": "x"}}') == repr(made)
    calls = 3 - len(STAMPED)
    assert calls == (1 if isinstance(made, float) and math.isfinite(made) else 2)
