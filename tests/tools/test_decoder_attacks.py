"""A model field's ``default_factory`` runs once per tool call, with or without the ArgumentDecoder (issue 14 attack).

The decoder does not judge a model field's factory result by the numbers rule (the tool's rule judges
only the fields the input set, see ``toolweave.tools._numbers``), so it never hands a call back to
pydantic after calling the factory (which then called it a second time).
"""

import datetime
import itertools
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pydantic
import pytest
from support.concurrency import counting
from toolweave._core import ArgumentDecoder as RustDecoder
from toolweave._native import IMPLEMENTATION
from toolweave._reference.decode import ArgumentDecoder as TwinDecoder
from toolweave.tools import MethodToolCallback


@pytest.mark.parametrize(
    'make',
    [uuid.uuid4, set, object, lambda: datetime.datetime(2024, 1, 2), lambda: {'id': uuid.uuid4()}, lambda: 2**70],
    ids=['uuid', 'set', 'object', 'datetime', 'dict-with-uuid', 'int-beyond-64-bits'],
)
@pytest.mark.parametrize('decoder', [True, False], ids=['decoder', 'pydantic'])
def test_a_model_default_factory_runs_once_per_call(make: Callable[[], Any], decoder: bool) -> None:
    factory, made = counting(make)

    class Stamped(pydantic.BaseModel):
        label: str
        stamp: Any = pydantic.Field(default_factory=factory)

    def stamped(item: Stamped, items: list[Stamped]) -> str:
        return repr([item.stamp, *(i.stamp for i in items)])

    callback = MethodToolCallback(stamped)
    if not decoder:
        callback._decoder = None  # the path without the decoder
    answer = callback.call('{"item": {"label": "a"}, "items": [{"label": "b"}, {"label": "c"}]}')
    assert len(made) == 3  # one per instance left to its default, never a second time
    assert answer == repr(made)


@pytest.mark.skipif(IMPLEMENTATION != 'rust', reason='the decoder runs with the Rust core only')
def test_the_decoder_returns_what_a_model_factory_made() -> None:
    counter = itertools.count()

    class Ticket(pydantic.BaseModel):
        n: int
        serial: Any = pydantic.Field(default_factory=lambda: (next(counter), uuid.UUID(int=7)))

    def ticket(t: Ticket) -> str:
        return repr((t.n, t.serial, sorted(t.model_fields_set)))

    callback = MethodToolCallback(ticket)
    assert callback.call('{"t": {"n": 1}}') == repr((1, (0, uuid.UUID(int=7)), ['n']))
    assert callback._decoder is not None  # the decoder was built and used
    assert callback.call('{"t": {"n": 2}}') == repr((2, (1, uuid.UUID(int=7)), ['n']))


class _Deferred(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(defer_build=True)
    x: int


class _ReadOnly(Mapping[str, Any]):
    """A core schema behind a Mapping that is not a dict."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def test_core_and_twin_give_no_plan_for_a_core_schema_that_is_not_a_dict() -> None:
    deferred = pydantic.TypeAdapter(_Deferred).core_schema  # a MockCoreSchema (a Mapping) until built
    assert type(deferred) is not dict
    assert RustDecoder.build(deferred) is None and TwinDecoder.build(deferred) is None
    plain = {'type': 'typed-dict', 'fields': {'n': {'type': 'typed-dict-field', 'schema': {'type': 'int'}}}}
    for decoder_class in (RustDecoder, TwinDecoder):
        assert decoder_class.build(plain).decode('{"n": 1}') == {'n': 1}
        assert decoder_class.build(_ReadOnly(plain)) is None
        nested = {**plain, 'fields': {'n': _ReadOnly(plain['fields']['n'])}}
        assert decoder_class.build(nested) is None
