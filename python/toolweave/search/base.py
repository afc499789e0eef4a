"""The ``ToolIndex`` protocol and what its searches return (Spring AI's tool-search ``ToolIndex``).

A tool index holds the :class:`~toolweave.tools.ToolDefinition` of every registered tool and answers a
free-text query with the best matches, best first. The ``ToolSearchToolCallingAdvisor`` asks it on
behalf of the model, so that only the tools found are sent to the model in the following rounds.

The advisor gives every conversation its own index, made by a :data:`ToolIndexFactory`; an index
that can make an empty sibling with its own settings (``empty_copy()``, as the built-in ones can)
serves as its own factory (:func:`index_factory`).

Every index ranks a tool whose name *is* the query first (:func:`exact_name_first`): case and
separators (``_``, ``-``, ``.``, spaces) do not matter (``get weather``, ``GetWeather`` and
``GET-WEATHER`` all name ``get_weather``), anything more or less does (``weather``, ``get_weathers``,
``get weather now``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from toolweave.tools.definition import ToolDefinition

__all__ = [
    'DEFAULT_MAX_RESULTS',
    'CopyableToolIndex',
    'ToolIndex',
    'ToolIndexFactory',
    'ToolSearchResult',
    'check_max_results',
    'exact_name_first',
    'index_factory',
    'name_key',
    'searchable_text',
]

DEFAULT_MAX_RESULTS = 10
"""Results returned when a search names no ``max_results`` (as Spring's regex index)."""


@dataclass(frozen=True)
class ToolSearchResult:
    """One match of a search.

    Attributes:
        name: The tool's name (call it by this exact name).
        description: The tool's description.
        score: How well it matched; larger is better. Its scale depends on the index (matched-term
            count for the regex index, BM25 score for the lexical one, cosine similarity in [-1, 1]
            for the vector one), so compare scores of one index only. A tool named exactly as the
            query scores 1 above the best other match (regex, lexical) or 1.0 (vector).
    """

    name: str
    description: str
    score: float


@runtime_checkable
class ToolIndex(Protocol):
    """Indexes tool definitions and finds them from a query.

    Implementations must be safe to use from several threads at once.
    """

    def index_tool(self, definition: ToolDefinition) -> None:
        """Add ``definition``; one with the same name is replaced."""
        ...

    def index_tools(self, definitions: Iterable[ToolDefinition]) -> None:
        """Add each of ``definitions`` (same replacement rule)."""
        ...

    def search(self, query: str, max_results: int = DEFAULT_MAX_RESULTS) -> list[ToolSearchResult]:
        """At most ``max_results`` matches of ``query``, best first (ties in indexing order)."""
        ...

    def clear(self) -> None:
        """Forget every tool."""
        ...


ToolIndexFactory = Callable[[], ToolIndex]
"""Makes a new, empty :class:`ToolIndex` (one per tool-search session)."""


@runtime_checkable
class CopyableToolIndex(ToolIndex, Protocol):
    """A :class:`ToolIndex` that can make an empty index with its own settings (all built-in indexes can)."""

    def empty_copy(self) -> ToolIndex:
        """A new index with the same settings and no tools."""
        ...


def index_factory(index: ToolIndex) -> ToolIndexFactory:
    """The factory that makes empty siblings of ``index`` (its ``empty_copy`` method).

    Raises:
        TypeError: ``index`` has no ``empty_copy()`` method.
    """
    if not isinstance(index, CopyableToolIndex):
        raise TypeError(
            f'{type(index).__name__} has no empty_copy() method, so it cannot make one index per conversation; '
            'pass tool_index_factory=<a function returning a new, empty index> instead, or add empty_copy()'
        )
    return index.empty_copy


_NAME_WORD = re.compile(r'[^\W_]+')


@functools.lru_cache(maxsize=4096)
def name_key(text: str) -> str:
    """``text`` as a tool name is compared with a query: letters and digits only, case-folded.

    >>> name_key('get_weather') == name_key('Get Weather') == name_key('getWeather') == name_key(' GET-WEATHER ')
    True
    >>> name_key('查询 天气')
    '查询天气'
    """
    return ''.join(_NAME_WORD.findall(text)).casefold()


def exact_name_first(
    query: str, ranked: Sequence[tuple[float, int]], names: Sequence[str], exact_score: float
) -> list[tuple[float, int]]:
    """``ranked`` with the tools whose name *is* ``query`` (see :func:`name_key`) moved to the front.

    Args:
        query: The search text.
        ranked: ``(score, position)`` pairs, best first; ``position`` indexes ``names``.
        names: Every indexed tool's name, in indexing order (tools missing from ``ranked`` included).
        exact_score: The score the exact matches get.

    Returns:
        The exact matches (indexing order, with ``exact_score``), then the rest of ``ranked``.

    >>> exact_name_first('get weather', [(2.0, 1), (1.0, 0)], ['get_weather', 'weather_alerts'], 3.0)
    [(3.0, 0), (2.0, 1)]
    """
    key = name_key(query)
    exact = [position for position, name in enumerate(names) if key and name_key(name) == key]
    if not exact:
        return list(ranked)
    chosen = set(exact)
    return [*((exact_score, position) for position in exact), *(item for item in ranked if item[1] not in chosen)]


def check_max_results(max_results: object) -> int:
    """``max_results`` when it is an int >= 1.

    Raises:
        ValueError: not an int (``bool`` included) or below 1.
    """
    if not isinstance(max_results, int) or isinstance(max_results, bool) or max_results < 1:
        raise ValueError(f'max_results must be an int >= 1, got {max_results!r}')
    return max_results


def check_definition(definition: object) -> ToolDefinition:
    """``definition`` when it is a :class:`ToolDefinition`.

    Raises:
        TypeError: anything else.
    """
    if not isinstance(definition, ToolDefinition):
        raise TypeError(f'a tool index takes ToolDefinition objects, not {type(definition).__name__}')
    return definition


def check_query(query: object) -> str:
    """``query`` when it is a ``str``.

    Raises:
        TypeError: anything else.
    """
    if not isinstance(query, str):
        raise TypeError(f'a tool search query must be a str, not {type(query).__name__}')
    return query


def parameter_descriptions(schema: Mapping[str, Any]) -> list[str]:
    """Names and descriptions of the properties of ``schema``, nested objects and ``$defs`` included.

    Args:
        schema: A JSON Schema object (a tool's input schema).

    Returns:
        The texts in document order, e.g. ``['city', 'City name', 'unit']``.
    """
    texts: list[str] = []
    stack: list[Any] = [schema]
    seen = 0
    while stack and seen < 10_000:  # bounded walk: a pathological schema cannot hang the indexer
        node = stack.pop(0)
        seen += 1
        if isinstance(node, Mapping):
            properties = node.get('properties')
            if isinstance(properties, Mapping):
                for key, value in properties.items():
                    texts.append(str(key))
                    if isinstance(value, Mapping) and isinstance(value.get('description'), str):
                        texts.append(value['description'])
            stack.extend(v for k, v in node.items() if k != 'description')
        elif isinstance(node, list):
            stack.extend(node)
    return texts


def searchable_text(definition: ToolDefinition, *, parameters: bool = True) -> str:
    r"""The text a tool is found by: name, description and (optionally) parameter names and descriptions.

    >>> from toolweave.tools import ToolDefinition
    >>> searchable_text(ToolDefinition('get_weather', 'Current weather', {'properties': {'city': {'description': 'City'}}}))
    'get_weather\nCurrent weather\ncity\nCity'
    """
    parts = [definition.name, definition.description]
    if parameters:
        parts.extend(parameter_descriptions(definition.input_schema))
    return '\n'.join(p for p in parts if p)
