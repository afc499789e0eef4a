"""The ``toolSearchTool`` callback of one request: searches the session's index, records the finds.

Its arguments: ``query`` (required string) and ``maxResults`` (optional integer, Spring's argument).
``maxResults`` is clamped into ``1..max_results`` (the advisor's maximum): ``0``, negatives and huge
numbers do not waste a round; a value that is not a whole number (``"3"``, ``2.5``, ``true``) goes back
to the model as an error text naming the allowed range.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, NoReturn

import orjson

from toolweave._native import parse_arguments
from toolweave.exceptions import ToolArgumentsError, ToolExecutionError
from toolweave.search.base import ToolIndexFactory
from toolweave.search.sessions import ToolSearchSessions
from toolweave.tools.context import ToolContext
from toolweave.tools.definition import ToolDefinition, ToolMetadata

__all__ = ['ToolSearchTool', 'search_tool_definition']

_DESCRIPTION = (
    'Search the available tools. Only the tools found so far can be called; call this first with a few '
    'keywords or a short description of what you need (any language). It returns the names and '
    'descriptions of the best matching tools, which you can call by their exact name from the next step on.'
)


def search_tool_definition(name: str, max_results: int) -> ToolDefinition:
    """The search tool's definition: ``query`` and an optional ``maxResults`` of at most ``max_results``.

    >>> search_tool_definition('toolSearchTool', 5).input_schema['properties']['maxResults']['maximum']
    5
    """
    schema: Mapping[str, Any] = {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        'type': 'object',
        'properties': {
            'query': {'type': 'string', 'description': 'Keywords or a short description of the tool you need'},
            'maxResults': {
                'type': 'integer',
                'minimum': 1,
                'maximum': max_results,
                'description': f'Most tools to return (default {max_results})',
            },
        },
        'required': ['query'],
        'additionalProperties': False,
    }
    return ToolDefinition(name, _DESCRIPTION, schema)


class ToolSearchTool:
    """A :class:`~toolweave.tools.ToolCallback` that searches one session's index for one request.

    Args:
        name: The tool's name.
        max_results: Most results per search.
        sessions: Where the session's index and finds live.
        session_id: The conversation.
        definitions: The request's tools (what the session's index must hold).
        factory: Makes the session's index when it has to be (re)built.
    """

    def __init__(
        self,
        name: str,
        max_results: int,
        sessions: ToolSearchSessions,
        session_id: str,
        definitions: tuple[ToolDefinition, ...],
        factory: ToolIndexFactory,
    ) -> None:
        self._definition = search_tool_definition(name, max_results)
        self._max_results = max_results
        self._sessions = sessions
        self._session_id = session_id
        self._definitions = definitions
        self._names = frozenset(d.name for d in definitions)
        self._factory = factory

    @property
    def tool_definition(self) -> ToolDefinition:
        return self._definition

    @property
    def tool_metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def __repr__(self) -> str:
        return f'ToolSearchTool(session={self._session_id!r})'

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Search; the result is JSON ``{"tools": [{"name", "description"}...]}`` (plus a hint when empty).

        Raises:
            ToolExecutionError: the arguments are not ``{"query": str, "maxResults"?: int}``, or the
                index rejected the query or failed to index the request's tools.
        """
        query, limit = self._arguments(tool_input)
        try:
            with self._sessions.using_index(self._session_id, self._definitions, self._factory) as index:
                results = index.search(query, limit)
        except (ValueError, TypeError) as error:
            raise ToolExecutionError(self._definition, error) from error
        found = [r for r in results if r.name in self._names][:limit]  # a custom index may return strangers
        self._sessions.add(self._session_id, [r.name for r in found])
        payload: dict[str, Any] = {'tools': [{'name': r.name, 'description': r.description} for r in found]}
        if not found:
            payload['message'] = f'No tool matched {query!r}. Try other or fewer words.'
        return orjson.dumps(payload).decode()

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """:meth:`call` in a worker thread (an embedding function may do I/O)."""
        return await asyncio.to_thread(self.call, tool_input, tool_context)

    def _arguments(self, tool_input: str) -> tuple[str, int]:
        try:
            arguments = parse_arguments(tool_input or '{}')
        except ToolArgumentsError as error:
            raise ToolExecutionError(self._definition, error) from error
        query = arguments.get('query') if isinstance(arguments, dict) else None
        if not isinstance(query, str):
            self._reject(f'{self._definition.name} needs {{"query": "<keywords>"}}, got {tool_input[:200]!r}')
        limit = arguments.get('maxResults')
        if limit is None:
            return query, self._max_results
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        if not isinstance(limit, int) or isinstance(limit, bool):
            self._reject(f'maxResults must be a whole number from 1 to {self._max_results}, got {limit!r}'[:300])
        return query, min(max(limit, 1), self._max_results)

    def _reject(self, message: str) -> NoReturn:
        raise ToolExecutionError(self._definition, ValueError(message), message)
