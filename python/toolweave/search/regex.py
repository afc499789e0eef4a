"""``RegexToolIndex``: the dependency-free index (as Spring AI's default regex tool index).

The query's whitespace-separated terms are OR-ed into one case-insensitive pattern that is matched
against each tool's name and description. Terms are matched literally (escaped), so a model cannot
send a pattern with catastrophic backtracking. The weakness this index shares with Spring's: a
query in a language written without spaces (Chinese, Japanese) is one long term that a description
phrased even slightly differently never contains, so the tool is lost. Use
:class:`~toolweave.search.LexicalToolIndex` or :class:`~toolweave.search.VectorToolIndex` there.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from toolweave.search.base import (
    DEFAULT_MAX_RESULTS,
    ToolSearchResult,
    check_definition,
    check_max_results,
    check_query,
    exact_name_first,
)
from toolweave.tools.definition import ToolDefinition

__all__ = ['MAX_PATTERN_LENGTH', 'RegexToolIndex']

MAX_PATTERN_LENGTH = 200
"""Longest pattern (in characters, after OR-ing the terms) a search accepts."""


class RegexToolIndex:
    """Finds tools whose name or description contains any term of the query.

    Ranking: a tool named exactly as the query first (case and separators aside, see
    :func:`~toolweave.search.base.name_key`), then number of distinct query terms found (more
    first), then indexing order. An empty or blank query matches every tool.

    >>> from toolweave.tools import ToolDefinition
    >>> index = RegexToolIndex()
    >>> index.index_tools([ToolDefinition('get_weather', 'Current weather of a city'),
    ...                    ToolDefinition('send_mail', 'Send an e-mail')])
    >>> [r.name for r in index.search('WEATHER city')]
    ['get_weather']
    """

    def __init__(self) -> None:
        self._tools: dict[str, ToolDefinition] = {}
        self._lock = threading.Lock()

    def empty_copy(self) -> RegexToolIndex:
        """A new, empty index of the same class (a subclass whose constructor takes arguments overrides this)."""
        return type(self)()

    def index_tool(self, definition: ToolDefinition) -> None:
        """Add ``definition`` (one of the same name is replaced).

        Raises:
            TypeError: ``definition`` is not a ``ToolDefinition``.
        """
        check_definition(definition)
        with self._lock:
            self._tools.pop(definition.name, None)
            self._tools[definition.name] = definition

    def index_tools(self, definitions: Iterable[ToolDefinition]) -> None:
        """Add each of ``definitions``.

        Raises:
            TypeError: an item is not a ``ToolDefinition`` (the items before it are indexed).
        """
        for definition in definitions:
            self.index_tool(definition)

    def search(self, query: str, max_results: int = DEFAULT_MAX_RESULTS) -> list[ToolSearchResult]:
        """Tools matching any term of ``query``; see the class docstring for the ranking.

        Args:
            query: Terms separated by whitespace; case does not matter.
            max_results: At most this many results (default 10).

        Returns:
            The matches, best first; score = number of distinct terms found (the best other score + 1
            for a tool named exactly as the query).

        Raises:
            ValueError: the OR-ed pattern is longer than 200 characters, or ``max_results`` < 1.
            TypeError: ``query`` is not a ``str``.
        """
        check_query(query)
        check_max_results(max_results)
        terms = list(dict.fromkeys(term.lower() for term in query.split()))
        pattern = '|'.join(re.escape(term) for term in terms)
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise ValueError(
                f'tool search pattern is {len(pattern)} characters long; at most {MAX_PATTERN_LENGTH} are allowed'
            )
        with self._lock:
            tools = list(self._tools.values())
        if not terms:
            return [ToolSearchResult(t.name, t.description, 0.0) for t in tools[:max_results]]
        compiled = re.compile(pattern, re.IGNORECASE)
        ranked: list[tuple[float, int]] = []
        for position, definition in enumerate(tools):
            found = {m.group(0).lower() for m in compiled.finditer(f'{definition.name}\n{definition.description}')}
            if found:
                ranked.append((float(len(found)), position))
        ranked.sort(key=lambda item: (-item[0], item[1]))
        top = ranked[0][0] if ranked else 0.0
        ranked = exact_name_first(query, ranked, [t.name for t in tools], top + 1.0)
        return [ToolSearchResult(tools[i].name, tools[i].description, score) for score, i in ranked[:max_results]]

    def clear(self) -> None:
        """Forget every tool."""
        with self._lock:
            self._tools.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._tools)
