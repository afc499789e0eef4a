"""The ``ToolIndex`` protocol and what its searches return (Spring AI's tool-search ``ToolIndex``).

A tool index holds the :class:`~toolweave.tools.ToolDefinition` of every registered tool and answers a
free-text query with the best matches, best first. The ``ToolSearchToolCallingAdvisor`` asks it on
behalf of the model, so that only the tools found are sent to the model in the following rounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from toolweave.tools.definition import ToolDefinition

__all__ = ['DEFAULT_MAX_RESULTS', 'ToolIndex', 'ToolSearchResult', 'check_max_results', 'searchable_text']

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
            for the vector one), so compare scores of one index only.
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
