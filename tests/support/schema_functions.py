"""Representative tool functions whose input schemas are snapshotted in tests/data/schemas/."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import pathlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Generic, Literal, Optional, TypeVar, Union

import pydantic
from toolweave.tools import ToolParam
from typing_extensions import NotRequired, Required, TypedDict

T = TypeVar('T')


class Unit(str, enum.Enum):
    C = 'celsius'
    F = 'fahrenheit'


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(pydantic.BaseModel):
    street: str
    city: str = pydantic.Field(description='City name')
    zip_code: Optional[str]


class Passenger(pydantic.BaseModel):
    name: str
    age: Annotated[int, pydantic.Field(ge=0, le=150)]
    address: Address
    email: str | None = None


class Car(pydantic.BaseModel):
    kind: Literal['car']
    brand: str


class Bike(pydantic.BaseModel):
    kind: Literal['bike']
    gears: int


class A(pydantic.BaseModel):
    x: int


class B(pydantic.BaseModel):
    y: str


class Node(pydantic.BaseModel):
    value: int
    children: list[Node] = []


@dataclasses.dataclass
class Point:
    x: float
    y: float
    label: Optional[str]
    z: float = 0.0


class Options(TypedDict, total=False):
    verbose: bool
    depth: Required[int]


class Filters(TypedDict):
    tag: str
    limit: NotRequired[int]


class Page(pydantic.BaseModel, Generic[T]):
    items: list[T]
    next_cursor: Optional[str] = None


def get_weather(city: Annotated[str, ToolParam(description='City name')], unit: Unit = Unit.C, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return city


def search(query: str, limit: int | None = None) -> str:
    """Search the web."""
    return query


def charts(chart_data: list, chart_title: Optional[str] = None) -> str:  # type: ignore[type-arg]
    """Draw a chart."""
    return ''


def register(v: Annotated[Union[Car, Bike], pydantic.Field(discriminator='kind')]) -> str:
    """Register a vehicle."""
    return ''


def f_union(arg: Union[A, B]) -> str:
    """Take an A or a B."""
    return ''


def book_flight(
    passenger: Passenger,
    departure: datetime.datetime,
    companions: list[Passenger],
    priority: Priority = Priority.LOW,
    note: Annotated[Optional[str], ToolParam(description='Free text', required=True)] = None,
) -> str:
    """Book a flight.

    Args:
        passenger: The main passenger.
        departure: When to leave.
        companions: Other passengers.
    """
    return ''


def walk_tree(root: Node, max_depth: int = 3) -> int:
    """Sum a tree."""
    return 0


def plot_point(p: Point, options: Options, filters: Filters | None = None) -> str:
    """Plot a point."""
    return ''


def constrained(
    count: Annotated[int, pydantic.Field(ge=1, le=10, description='How many')],
    code: Annotated[str, pydantic.Field(min_length=2, max_length=8, pattern='^[A-Z]+$')],
    ratio: Annotated[float, pydantic.Field(gt=0, lt=1)] = 0.5,
) -> str:
    """Constrained values."""
    return ''


def misc_types(
    amount: decimal.Decimal,
    ident: uuid.UUID,
    day: datetime.date,
    at: datetime.time,
    wait: datetime.timedelta,
    path: pathlib.Path,
    blob: bytes,
    tags: set[str],
    pair: tuple[int, str],
    flag: bool = False,
) -> str:
    """Every scalar-ish type."""
    return ''


def maps(
    anything: dict[str, Any],
    homes: dict[str, Address],
    counts: Mapping[str, int],
    weights: Sequence[float],
    mode: Literal[1, 2, 3] = 1,
) -> str:
    """Maps and sequences."""
    return ''


def paginate(page: Page[Address], size: Annotated[int, ToolParam(required=False)] = 10) -> str:
    """A generic model."""
    return ''


SNAPSHOT_FUNCTIONS = [
    get_weather,
    search,
    charts,
    register,
    f_union,
    book_flight,
    walk_tree,
    plot_point,
    constrained,
    misc_types,
    maps,
    paginate,
]
