"""``ToolSearchToolCallingAdvisor``: progressive tool disclosure (Spring AI 2.0 tool search).

With dozens of tools, sending every definition in every round costs tokens and lowers the model's
accuracy. This advisor sends only a ``toolSearchTool`` plus the tools already discovered in the
conversation. The model calls ``toolSearchTool`` with a query; the :class:`~toolweave.search.ToolIndex`
finds the best matches among the request's tools; their names and descriptions go back to the model
and the tools join the conversation's session, so their definitions are sent from the next round on.

Sessions are keyed by the ``chat_memory_conversation_id`` advisor parameter (``'default'`` without
one), kept in an LRU of ``max_sessions`` (1000) entries that is safe across threads and shared by the
copies :class:`~toolweave.ChatClient` makes per request. Every tool of the request stays callable by
its exact name (a tool called that way joins the session too). Each round's response carries the
metadata ``toolDefinitionsPerRound`` (number of definitions sent in each round so far) and
``toolDefinitionBytesPerRound`` (their size as the JSON of OpenAI's ``tools`` array, in bytes), in
the blocking, async and streaming paths (every streamed chunk carries them).
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from toolweave._native import parse_arguments
from toolweave.advisors.api import (
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisorChain,
)
from toolweave.advisors.tool_calling import ToolCallingAdvisor
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse
from toolweave.exceptions import ToolArgumentsError, ToolExecutionError
from toolweave.memory.base import CONVERSATION_ID, DEFAULT_CONVERSATION_ID, check_conversation_id
from toolweave.search.base import ToolIndex, check_max_results
from toolweave.search.regex import RegexToolIndex
from toolweave.tools.callback import ToolCallback
from toolweave.tools.context import ToolContext
from toolweave.tools.definition import ToolDefinition, ToolMetadata
from toolweave.tools.manager import ToolCallingManager

__all__ = [
    'DEFINITIONS_METADATA_KEY',
    'DEFINITION_BYTES_METADATA_KEY',
    'TOOL_SEARCH_TOOL_NAME',
    'ToolSearchSessions',
    'ToolSearchToolCallingAdvisor',
    'definition_bytes',
]

TOOL_SEARCH_TOOL_NAME = 'toolSearchTool'
DEFINITIONS_METADATA_KEY = 'toolDefinitionsPerRound'
"""Response metadata: number of tool definitions sent in each round so far (list of int)."""
DEFINITION_BYTES_METADATA_KEY = 'toolDefinitionBytesPerRound'
"""Response metadata: JSON bytes of the tool definitions sent in each round so far (list of int)."""
_STATE_KEY = 'toolweave.tool_search'
_SEARCH_DESCRIPTION = (
    'Search the available tools. Only the tools found so far can be called; call this first with a few '
    'keywords or a short description of what you need (any language). It returns the names and '
    'descriptions of the best matching tools, which you can call by their exact name from the next step on.'
)
_SEARCH_SCHEMA: Mapping[str, Any] = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema',
    'type': 'object',
    'properties': {'query': {'type': 'string', 'description': 'Keywords or a short description of the tool you need'}},
    'required': ['query'],
    'additionalProperties': False,
}


class ToolSearchSessions:
    """Tools discovered per conversation, least recently used conversations evicted first.

    Thread-safe. Discovery order is kept (the model sees tools in the order it found them).

    Args:
        max_sessions: Conversations kept (default 1000).

    Raises:
        ValueError: ``max_sessions`` < 1.
    """

    def __init__(self, max_sessions: int = 1000) -> None:
        if not isinstance(max_sessions, int) or isinstance(max_sessions, bool) or max_sessions < 1:
            raise ValueError(f'max_sessions must be an int >= 1, got {max_sessions!r}')
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, dict[str, None]] = OrderedDict()
        self._lock = threading.Lock()

    def discovered(self, session_id: str) -> tuple[str, ...]:
        """The tool names discovered in ``session_id``, in discovery order (marks it recently used)."""
        with self._lock:
            names = self._sessions.get(session_id)
            if names is None:
                return ()
            self._sessions.move_to_end(session_id)
            return tuple(names)

    def add(self, session_id: str, names: Iterable[str]) -> None:
        """Add ``names`` to ``session_id`` (created when new; the oldest session goes past the bound)."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._sessions[session_id] = {}
            self._sessions.move_to_end(session_id)
            for name in names:
                session.setdefault(name, None)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)

    def clear(self, session_id: str | None = None) -> None:
        """Forget one session, or every session when ``session_id`` is ``None``."""
        with self._lock:
            if session_id is None:
                self._sessions.clear()
            else:
                self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._sessions


class _Catalog:
    """The index and what has been indexed into it, shared by an advisor and its copies."""

    def __init__(self, index: ToolIndex) -> None:
        self.index = index
        self.indexed: dict[str, ToolDefinition] = {}
        self.lock = threading.Lock()

    def sync(self, definitions: Iterable[ToolDefinition]) -> None:
        """Index the definitions that are new or changed since the last request."""
        with self.lock:
            changed = [d for d in definitions if self.indexed.get(d.name) != d]
            if changed:
                self.index.index_tools(changed)
                self.indexed.update((d.name, d) for d in changed)

    def size(self) -> int:
        with self.lock:
            return len(self.indexed)


@dataclass
class _SearchLoop:
    """Per-request state, carried in the request context through the rounds."""

    session_id: str
    registry: dict[str, ToolCallback]
    search_tool: ToolCallback
    definitions_per_round: list[int] = field(default_factory=list)
    bytes_per_round: list[int] = field(default_factory=list)


class _ToolSearchTool:
    """The ``toolSearchTool`` of one request: searches the index, records the finds in the session."""

    def __init__(self, advisor: ToolSearchToolCallingAdvisor, session_id: str, registry: Mapping[str, object]) -> None:
        self._advisor = advisor
        self._session_id = session_id
        self._registry = registry
        self._definition = ToolDefinition(advisor.search_tool_name, _SEARCH_DESCRIPTION, _SEARCH_SCHEMA)

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
            ToolExecutionError: the arguments are not ``{"query": str}``, or the index rejected the query.
        """
        query = self._query(tool_input)
        advisor = self._advisor
        extra = advisor._catalog.size() - len(self._registry) + 1  # tools of other requests may rank first
        try:
            results = advisor.tool_index.search(query, advisor.max_results + max(extra, 1))
        except (ValueError, TypeError) as error:
            raise ToolExecutionError(self._definition, error) from error
        found = [r for r in results if r.name in self._registry and r.name != self._definition.name]
        found = found[: advisor.max_results]
        advisor.sessions.add(self._session_id, [r.name for r in found])
        payload: dict[str, Any] = {'tools': [{'name': r.name, 'description': r.description} for r in found]}
        if not found:
            payload['message'] = f'No tool matched {query!r}. Try other or fewer words.'
        return orjson.dumps(payload).decode()

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """:meth:`call` in a worker thread (an embedding function may do I/O)."""
        return await asyncio.to_thread(self.call, tool_input, tool_context)

    def _query(self, tool_input: str) -> str:
        try:
            arguments = parse_arguments(tool_input or '{}')
        except ToolArgumentsError as error:
            raise ToolExecutionError(self._definition, error) from error
        query = arguments.get('query') if isinstance(arguments, dict) else None
        if not isinstance(query, str):
            message = f'{self._definition.name} needs {{"query": "<keywords>"}}, got {tool_input[:200]!r}'
            raise ToolExecutionError(self._definition, ValueError(message), message)
        return query


class ToolSearchToolCallingAdvisor(ToolCallingAdvisor):
    """The tool loop with progressive tool disclosure; see the module docstring.

    >>> from toolweave.search import RegexToolIndex
    >>> advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=3)
    >>> advisor.search_tool_name
    'toolSearchTool'

    Args:
        tool_calling_manager: As :class:`ToolCallingAdvisor`.
        tool_index: Where tools are searched (default :class:`~toolweave.search.RegexToolIndex`, as
            Spring's default; use :class:`~toolweave.search.LexicalToolIndex` for Chinese/Japanese).
        max_results: Tools returned per search (default 5).
        max_sessions: Conversations remembered (default 1000; ignored when ``sessions`` is given).
        sessions: Share a session store between advisors (default: a new one).
        search_tool_name: Name of the search tool (default ``toolSearchTool``).
        **loop_settings: ``order``, ``conversation_history_enabled``, ``eligibility_checker``,
            ``max_rounds``, ``max_identical_tool_calls`` as :class:`ToolCallingAdvisor`.

    Raises:
        ValueError: bad ``max_results``/``max_sessions``, or any :class:`ToolCallingAdvisor` error;
            per request, a request tool named like the search tool.
    """

    def __init__(
        self,
        tool_calling_manager: ToolCallingManager | None = None,
        *,
        tool_index: ToolIndex | None = None,
        max_results: int = 5,
        max_sessions: int = 1000,
        sessions: ToolSearchSessions | None = None,
        search_tool_name: str = TOOL_SEARCH_TOOL_NAME,
        _catalog: _Catalog | None = None,
        **loop_settings: Any,
    ) -> None:
        super().__init__(tool_calling_manager, **loop_settings)
        self.max_results = check_max_results(max_results)
        self.sessions = sessions if sessions is not None else ToolSearchSessions(max_sessions)
        self.search_tool_name = search_tool_name
        index = tool_index if tool_index is not None else (_catalog.index if _catalog else RegexToolIndex())
        self._catalog = _catalog if _catalog is not None and _catalog.index is index else _Catalog(index)

    @property
    def tool_index(self) -> ToolIndex:
        """The index searched by ``toolSearchTool``."""
        return self._catalog.index

    def copy(self, **changes: Any) -> ToolSearchToolCallingAdvisor:
        """A new advisor with the same settings, sharing the index and the sessions."""
        settings: dict[str, Any] = {
            'tool_index': self.tool_index,
            'max_results': self.max_results,
            'sessions': self.sessions,
            'search_tool_name': self.search_tool_name,
            '_catalog': self._catalog,
        }
        settings.update(changes)
        copied = super().copy(**settings)
        assert isinstance(copied, ToolSearchToolCallingAdvisor)
        return copied

    def session_id(self, request: ChatClientRequest) -> str:
        """The request's ``chat_memory_conversation_id`` parameter, else ``'default'``.

        Raises:
            ValueError: the parameter is empty. TypeError: it is not a ``str``.
        """
        return check_conversation_id(request.context.get(CONVERSATION_ID, DEFAULT_CONVERSATION_ID))

    # -- hooks ---------------------------------------------------------------------------------

    def do_initialize_loop(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientRequest:
        """Index the request's tools and add the search tool to what the manager can run."""
        return self._initialize(request)

    def do_initialize_loop_stream(self, request: ChatClientRequest, chain: StreamAdvisorChain) -> ChatClientRequest:
        """As :meth:`do_initialize_loop`."""
        return self._initialize(request)

    def do_before_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientRequest:
        """Send only the search tool and the session's discovered tools this round."""
        return self._narrow(request)

    def do_before_stream(self, request: ChatClientRequest, chain: StreamAdvisorChain) -> ChatClientRequest:
        """As :meth:`do_before_call`."""
        return self._narrow(request)

    def do_after_call(self, response: ChatClientResponse, chain: CallAdvisorChain) -> ChatClientResponse:
        """Record exact-name calls in the session; put the per-round counts in the metadata."""
        return self._annotate(response)

    def do_after_stream(self, chunk: ChatClientResponse, chain: StreamAdvisorChain) -> ChatClientResponse:
        """As :meth:`do_after_call`, per chunk."""
        return self._annotate(chunk)

    # -- internals -----------------------------------------------------------------------------

    def _initialize(self, request: ChatClientRequest) -> ChatClientRequest:
        options = request.prompt.options
        if not isinstance(options, ToolCallingChatOptions) or not options.tool_callbacks:
            return request
        registry = {cb.tool_definition.name: cb for cb in options.tool_callbacks}
        if self.search_tool_name in registry:
            raise ValueError(
                f"a request tool is named '{self.search_tool_name}', the name of the tool-search tool; "
                'rename the tool or pass search_tool_name='
            )
        self._catalog.sync(cb.tool_definition for cb in options.tool_callbacks)
        session_id = self.session_id(request)
        search_tool = _ToolSearchTool(self, session_id, registry)
        state = _SearchLoop(session_id, registry, search_tool)
        everything = replace(options, tool_callbacks=(search_tool, *options.tool_callbacks))
        return ChatClientRequest(Prompt(request.prompt.messages, everything), {**request.context, _STATE_KEY: state})

    def _narrow(self, request: ChatClientRequest) -> ChatClientRequest:
        state = request.context.get(_STATE_KEY)
        options = request.prompt.options
        if not isinstance(state, _SearchLoop) or not isinstance(options, ToolCallingChatOptions):
            return request
        found = [state.registry[n] for n in self.sessions.discovered(state.session_id) if n in state.registry]
        sent: Sequence[ToolCallback] = (state.search_tool, *found)
        state.definitions_per_round.append(len(sent))
        state.bytes_per_round.append(definition_bytes(sent))
        return request.with_prompt(Prompt(request.prompt.messages, replace(options, tool_callbacks=tuple(sent))))

    def _annotate(self, response: ChatClientResponse) -> ChatClientResponse:
        state = response.context.get(_STATE_KEY)
        chat = response.chat_response
        if not isinstance(state, _SearchLoop) or chat is None:
            return response
        called = [c.name for g in chat.generations for c in g.output.tool_calls if c.name in state.registry]
        if called:
            self.sessions.add(state.session_id, called)
        metadata = {
            **chat.metadata,
            DEFINITIONS_METADATA_KEY: list(state.definitions_per_round),
            DEFINITION_BYTES_METADATA_KEY: list(state.bytes_per_round),
        }
        return replace(response, chat_response=_with_metadata(chat, metadata))


def _with_metadata(chat: ChatResponse, metadata: dict[str, Any]) -> ChatResponse:
    return replace(chat, metadata=metadata)


def definition_bytes(callbacks: Iterable[ToolCallback]) -> int:
    """Size in bytes of the callbacks' definitions as the JSON of an OpenAI ``tools`` array.

    >>> definition_bytes([])
    2
    """
    return len(orjson.dumps([cb.tool_definition.to_openai() for cb in callbacks]))
