"""The JSON-native binding of ``MethodToolCallback`` (:mod:`toolweave.tools._json_native`) equals pydantic's.

For functions whose parameters are JSON-native, the argument text is validated by the core's compiled
JSON Schema and converted without pydantic. The specification is the pydantic path
(``MethodToolCallback._pydantic_values``): over generated signatures and argument documents
(numbers beyond 64 bits, ``3.0`` for an ``int``, ``3`` for a ``float``, ``NaN``/``Infinity`` text,
unicode and lone surrogates, nested containers, missing, extra and repeated keys, strings for numbers)
both give equal values with the same type at every leaf, or the same error text.
"""

from __future__ import annotations

import enum
import inspect
import itertools
import json
from typing import Annotated, Any, Literal, Optional

import pydantic
import pytest
import typing_extensions
from hypothesis import event, given, settings
from hypothesis import strategies as st
from toolweave._native import parse_arguments
from toolweave.exceptions import ToolArgumentsError, ToolExecutionError
from toolweave.tools import MethodToolCallback, ToolParam
from toolweave.tools._json_native import NativeArguments, native_arguments
from toolweave.tools.schema import function_schema


class Color(str, enum.Enum):
    RED = 'red'
    GREEN = 'green'


class Mood(enum.Enum):
    """Not a ``str`` subclass, with an alias: the value still names the canonical member."""

    HAPPY = 'happy'
    GLAD = 'happy'  # noqa: PIE796 - an alias on purpose
    SAD = 'sad'


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


LEAF_TYPES: list[Any] = [
    str,
    int,
    float,
    bool,
    type(None),
    Color,
    Mood,
    Literal['a', 'b'],
    Annotated[int, ToolParam(description='described')],
    Annotated[float, pydantic.Field(description='described')],
]
INELIGIBLE_TYPES: list[Any] = [
    Any,
    int | str,
    Priority,
    Literal[1, 2],
    tuple[int, ...],
    Annotated[int, pydantic.Field(ge=0)],
    dict[int, str],
]
_names = itertools.count()


def _typed_dict(fields: dict[str, tuple[Any, bool]], total: bool) -> Any:
    """A TypedDict of ``fields`` (name -> (type, marked NotRequired/Required against ``total``))."""
    wrapped = {
        name: (typing_extensions.NotRequired[t] if total else typing_extensions.Required[t]) if marked else t
        for name, (t, marked) in fields.items()
    }
    return typing_extensions.TypedDict(f'TD{next(_names)}', wrapped, total=total)  # type: ignore[operator]


def _types(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            inner.map(lambda t: Optional[t]),
            inner.map(lambda t: t | None),
            inner.map(lambda t: list[t]),  # type: ignore[valid-type]
            inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
            st.builds(
                _typed_dict,
                st.dictionaries(st.sampled_from(['a', 'b', 'c', 'é']), st.tuples(inner, st.booleans()), max_size=3),
                st.booleans(),
            ),
        )

    return st.recursive(leaves, extend, max_leaves=6)


TYPES = _types(st.sampled_from(LEAF_TYPES) | st.sampled_from(INELIGIBLE_TYPES).filter(lambda _: True))
ELIGIBLE_TYPES = _types(st.sampled_from(LEAF_TYPES))


def _function(params: list[tuple[str, Any, Any, bool]]) -> Any:
    """A function with ``(name, annotation, default or inspect.Parameter.empty, keyword_only)`` parameters."""

    def tool_function(*args: Any, **kwargs: Any) -> str:
        return 'ok'

    parameters = []
    seen_keyword = False
    for name, annotation, default, keyword_only in params:
        seen_keyword = seen_keyword or keyword_only
        kind = inspect.Parameter.KEYWORD_ONLY if seen_keyword else inspect.Parameter.POSITIONAL_OR_KEYWORD
        parameters.append(inspect.Parameter(name, kind, default=default, annotation=annotation))
    positional = [p for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    if any(p.default is inspect.Parameter.empty for p in positional[_first_default(positional) :]):
        parameters = [p.replace(default=inspect.Parameter.empty) for p in parameters]  # no default before a required
    tool_function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    tool_function.__annotations__ = {p.name: p.annotation for p in parameters}
    tool_function.__name__ = f'tool_{next(_names)}'
    return tool_function


def _first_default(parameters: list[inspect.Parameter]) -> int:
    return next((i for i, p in enumerate(parameters) if p.default is not inspect.Parameter.empty), len(parameters))


SIGNATURES = st.lists(
    st.tuples(
        st.sampled_from(['x', 'y', 'zé', 'order']), TYPES, st.sampled_from([inspect.Parameter.empty, None, 7])
    ).flatmap(lambda p: st.tuples(st.just(p[0]), st.just(p[1]), st.just(p[2]), st.booleans())),
    min_size=1,
    max_size=3,
    unique_by=lambda p: p[0],
)

NUMBERS = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**30, -(10**30), 2**53 + 1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**63), 2**63 - 1).map(float),
    st.sampled_from([3.0, -0.0, 1e20, 9.223372036854775807e18, -9.223372036854775808e18, 1e308, 2.5]),
    st.sampled_from([float('nan'), float('inf'), float('-inf')]),
)
SCALARS = st.one_of(
    NUMBERS,
    st.text(max_size=6),
    st.sampled_from(['red', 'green', 'happy', 'sad', 'a', 'b', '3', '3.5', 'true', '\ud800', 'é\x00']),
    st.booleans(),
    st.none(),
)


def _value_for(annotation: Any) -> st.SearchStrategy[Any]:
    """Mostly a value of ``annotation``'s shape (so the fast path is taken), sometimes anything."""
    return st.one_of(_shaped(annotation), _shaped(annotation), _shaped(annotation), _anything())


def _anything() -> st.SearchStrategy[Any]:
    return st.recursive(
        SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    )


def _shaped(annotation: Any) -> st.SearchStrategy[Any]:
    origin = typing_extensions.get_origin(annotation)
    args = typing_extensions.get_args(annotation)
    if origin in (typing_extensions.Required, typing_extensions.NotRequired, Annotated):
        return _shaped(args[0])
    if annotation in (int, float):
        return NUMBERS
    if annotation is str:
        return st.text(max_size=8)
    if annotation is bool:
        return st.booleans()
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return st.sampled_from([m.value for m in annotation] + ['nope'])
    if origin is Literal:
        return st.sampled_from([*args, 'c'])
    if origin is list:
        return st.lists(st.deferred(lambda: _value_for(args[0])), max_size=3)
    if origin is dict and args and args[0] is str:
        return st.dictionaries(st.text(max_size=3), st.deferred(lambda: _value_for(args[1])), max_size=3)
    if typing_extensions.is_typeddict(annotation):
        hints = typing_extensions.get_type_hints(annotation, include_extras=True)
        return st.fixed_dictionaries(
            {},
            optional={
                **{name: st.deferred(lambda t=t: _value_for(t)) for name, t in hints.items()},
                'extra': SCALARS,
            },
        )
    if origin is not None and type(None) in args:
        return st.none() | st.one_of(*[_shaped(a) for a in args if a is not type(None)])
    return _anything()


def _documents(params: list[tuple[str, Any, Any, bool]]) -> st.SearchStrategy[str]:
    shaped = st.fixed_dictionaries(
        {},
        optional={**{name: _value_for(annotation) for name, annotation, _, _ in params}, 'stranger': SCALARS},
    )
    return st.tuples(shaped, st.sampled_from(['plain', 'repeat', 'raw']), st.data()).map(_text)


def _text(case: tuple[dict[str, Any], str, Any]) -> str:
    document, how, _ = case
    text = json.dumps(document, ensure_ascii=False)
    if how == 'repeat' and document:
        name = next(iter(document))
        return text[:-1] + f', {json.dumps(name)}: "late"' + '}'
    if how == 'raw':
        return json.dumps(document)  # \u escapes (a lone surrogate stays an escape)
    return text


def outcome(run: Any) -> tuple[str, Any]:
    """``('ok', values, leaf types)`` or ``('error', cause's class, message)`` (``__cause__`` is the cause)."""
    try:
        values = run()
    except ToolExecutionError as exc:
        assert exc.__cause__ is exc.cause
        return 'error', type(exc.cause).__name__, str(exc)
    return 'ok', values, _types_of(values)


def _types_of(value: Any) -> Any:
    """The value's shape with every leaf replaced by its type (dict keys too)."""
    if isinstance(value, dict):
        return (dict, {(type(k), k): _types_of(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return (type(value), [_types_of(v) for v in value])
    return type(value)


def _both(tool: MethodToolCallback, text: str) -> tuple[tuple[str, Any], tuple[str, Any]]:
    return outcome(lambda: tool._values(text)), outcome(lambda: tool._pydantic_values(text))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_native_binding_equals_pydantic(data: st.DataObject) -> None:
    params = data.draw(SIGNATURES)
    try:
        tool = MethodToolCallback(_function(params))
    except TypeError:  # a type pydantic cannot bind: nothing to compare
        return
    text = data.draw(_documents(params))
    native, slow = _both(tool, text)
    assert native == slow, text
    compiled = native_arguments(function_schema(tool.function))
    event('not compiled' if compiled is None else 'pydantic decides' if compiled.values(text) is None else 'native')


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_eligible_signatures_take_the_native_path(data: st.DataObject) -> None:
    """JSON-native parameter types compile, and their well-shaped documents are bound without pydantic."""
    params = data.draw(SIGNATURES.filter(lambda ps: True).map(lambda ps: ps))
    params = [(n, data.draw(ELIGIBLE_TYPES), d, k) for n, _, d, k in params]
    tool = MethodToolCallback(_function(params))
    native = native_arguments(function_schema(tool.function))
    assert isinstance(native, NativeArguments)
    text = data.draw(_documents(params))
    result, slow = _both(tool, text)
    assert result == slow, text
    event('pydantic decides' if native.values(text) is None else 'native')


def place(order: OrderLike, count: int = 1, *, ratio: float = 0.5, tags: list[Color] | None = None) -> str:
    return f'{order} {count} {ratio} {tags}'


class LineLike(typing_extensions.TypedDict):
    sku: str
    quantity: int
    price: float


class OrderLike(typing_extensions.TypedDict):
    customer: str
    lines: list[LineLike]
    note: typing_extensions.NotRequired[str | None]


TOOL = MethodToolCallback(place)
NATIVE = native_arguments(function_schema(place))


def test_a_typed_dict_tool_is_bound_without_pydantic() -> None:
    assert NATIVE is not None
    text = json.dumps(
        {'order': {'customer': 'Ada', 'lines': [{'sku': 'A', 'quantity': 2.0, 'price': 3}]}, 'tags': ['red']}
    )
    values = NATIVE.values(text)
    assert values == {
        'order': {'customer': 'Ada', 'lines': [{'sku': 'A', 'quantity': 2, 'price': 3.0}]},
        'tags': [Color.RED],
    }
    line = values['order']['lines'][0]
    assert type(line['quantity']) is int and type(line['price']) is float and values['tags'][0] is Color.RED
    assert TOOL.call(text) == (
        "{'customer': 'Ada', 'lines': [{'sku': 'A', 'quantity': 2, 'price': 3.0}]} 1 0.5 [<Color.RED: 'red'>]"
    )


@pytest.mark.parametrize(
    'text',
    [
        '{"order": {"customer": "Ada", "lines": [], "extra": 1}}',
        '{"order": {"customer": "Ada", "lines": [{"sku": "A", "quantity": "2", "price": 1}]}}',
        '{"order": {"customer": "Ada", "lines": []}, "count": 1e19}',
        '{"order": {"customer": "Ada", "lines": []}, "count": 99999999999999999999}',
        '{"order": {"customer": "Ada", "lines": []}, "ratio": NaN}',
        '{"order": {"customer": "Ada", "lines": []}, "ratio": 18446744073709551615}',
        '{"order": {"customer": "Ada", "lines": []}, "tags": ["blue"]}',
        '[1]',
    ],
)
def test_what_pydantic_decides_is_left_to_it(text: str) -> None:
    """The native path says no; the call gives pydantic's answer."""
    assert NATIVE is not None
    assert NATIVE.values(text) is None
    assert outcome(lambda: TOOL._values(text)) == outcome(lambda: TOOL._pydantic_values(text))


def test_an_extra_nested_key_is_refused_as_pydantic_refuses_it() -> None:
    """The arguments' ``extra='forbid'`` reaches nested TypedDicts without a config of their own."""
    text = '{"order": {"customer": "Ada", "lines": [], "extra": 1}}'
    with pytest.raises(ToolExecutionError, match=r"^Invalid arguments for tool 'place': order.extra: Extra inputs"):
        TOOL._values(text)


@pytest.mark.parametrize('annotation', INELIGIBLE_TYPES)
def test_types_pydantic_must_bind_are_not_compiled(annotation: Any) -> None:
    tool = MethodToolCallback(_function([('x', annotation, inspect.Parameter.empty, False)]))
    assert native_arguments(function_schema(tool.function)) is None


class Point(pydantic.BaseModel):
    x: int


def move(point: Point) -> str:
    return str(point)


def test_a_model_parameter_keeps_the_pydantic_path() -> None:
    assert native_arguments(function_schema(move)) is None
    assert MethodToolCallback(move).call('{"point": {"x": "3"}}') == 'x=3'


class Tree(typing_extensions.TypedDict):
    label: str
    children: list[Tree]


def grow(tree: Tree, depth: list[list[list[list[list[list[list[list[list[float]]]]]]]]] | None = None) -> str:
    return tree['label']


def test_recursive_and_deep_types_keep_the_pydantic_path() -> None:
    assert native_arguments(function_schema(grow)) is None
    assert MethodToolCallback(grow).call('{"tree": {"label": "root", "children": []}}') == 'root'


class Line(pydantic.BaseModel):
    sku: str
    quantity: int
    price: float


class Basket(pydantic.BaseModel):
    customer: str
    lines: list[Line]


def checkout(basket: Basket, lines: list[LineLike], count: int = 1) -> str:
    return 'ok'


def checkout_one(basket: Basket) -> str:
    return 'ok'


def slow_path(tool: MethodToolCallback, text: str) -> Any:
    """The specification: the core's strict parse, then each parameter validated on its own."""
    try:
        raw = parse_arguments(text)
    except ToolArgumentsError as exc:
        message = f"Invalid arguments for tool '{tool.tool_definition.name}': {exc}"
        raise ToolExecutionError(tool.tool_definition, exc, message) from exc
    return tool._validate(raw)


ODD_NUMBERS = st.sampled_from(
    ['NaN', 'Infinity', '-Infinity', '1e400', '"NaN"', '"Infinity"', '"x"', '3', '2.5', '1e19']
)
ODD_STRINGS = st.sampled_from(['"NaN"', '"Infinity in a word"', '"ok"', '5', 'null', 'NaN'])


@st.composite
def _odd_calls(draw: st.DrawFn) -> str:
    line = '{{"sku": {}, "quantity": {}, "price": {}}}'
    lines = [
        line.format(draw(ODD_STRINGS), draw(ODD_NUMBERS), draw(ODD_NUMBERS)) for _ in range(draw(st.integers(0, 2)))
    ]
    basket = '{{"customer": {}, "lines": [{}]}}'.format(draw(ODD_STRINGS), ', '.join(lines))
    members = {'basket': basket, 'lines': f'[{", ".join(lines)}]', 'count': draw(ODD_NUMBERS), 'stranger': '1'}
    chosen = draw(st.lists(st.sampled_from(list(members)), unique=True))
    return '{' + ', '.join(f'"{name}": {members[name]}' for name in chosen) + '}'


@settings(max_examples=300, deadline=None)
@given(_odd_calls(), st.sampled_from([checkout, checkout_one]))
def test_invalid_calls_with_nan_or_infinity_equal_the_slow_path(text: str, function: Any) -> None:
    """pydantic's JSON takes ``NaN``/``Infinity``, the slow path refuses them: the invalid-call shortcuts tell them apart."""
    tool = MethodToolCallback(function)
    assert outcome(lambda: tool._values(text)) == outcome(lambda: slow_path(tool, text))
