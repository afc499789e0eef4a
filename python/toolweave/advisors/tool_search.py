"""``ToolSearchToolCallingAdvisor``: progressive tool disclosure (Spring AI 2.0 tool search).

With dozens of tools, sending every definition in every round costs tokens and lowers the model's
accuracy. This advisor sends only a ``toolSearchTool`` plus the tools already discovered in the
conversation. The model calls ``toolSearchTool`` with a query (and optionally ``maxResults``); the
conversation's own :class:`~toolweave.search.ToolIndex` finds the best matches among the request's
tools; their names and descriptions go back to the model and the tools join the conversation's
session, so their definitions are sent from the next round on.

Sessions are keyed by the ``chat_memory_conversation_id`` advisor parameter (``'default'`` without
one), kept in an LRU of ``max_sessions`` (1000) entries that is safe across threads and shared by the
copies :class:`~toolweave.ChatClient` makes per request. Each session has its own index, made by
``tool_index_factory`` (or by ``tool_index.empty_copy()``), filled with the request's tools at loop
start, rebuilt when they change and cleared when the session is evicted or cleared: a conversation
never sees, nor is ranked against, another conversation's tools.

Tools named in the ``toolSearchTool`` results found in the prompt's messages (a chat memory's
history, earlier rounds) stay available and join the session (``accumulate_from_history``, on by
default as Spring's ``referenceToolNameAccumulation``). Every tool of the request stays callable by
its exact name (a tool called that way joins the session too). A system-message suffix explains the
search tool to the model in every round (``system_message_suffix``; ``None`` sends none). Each
round's response carries the metadata ``toolDefinitionsPerRound`` (number of definitions sent in
each round so far) and ``toolDefinitionBytesPerRound`` (their size as the JSON of OpenAI's ``tools``
array, in bytes), in the blocking, async and streaming paths (every streamed chunk carries them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from toolweave.advisors.api import (
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisorChain,
)
from toolweave.advisors.tool_calling import ToolCallingAdvisor
from toolweave.chat.messages import Message, SystemMessage, ToolResponseMessage
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.memory.base import CONVERSATION_ID, DEFAULT_CONVERSATION_ID, check_conversation_id
from toolweave.search._search_tool import ToolSearchTool
from toolweave.search.base import ToolIndex, ToolIndexFactory, check_max_results, index_factory
from toolweave.search.regex import RegexToolIndex
from toolweave.search.sessions import DEFAULT_MAX_SESSIONS, ToolSearchSessions
from toolweave.tools.callback import ToolCallback
from toolweave.tools.manager import ToolCallingManager

__all__ = [
    'DEFAULT_SYSTEM_MESSAGE_SUFFIX',
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
DEFAULT_SYSTEM_MESSAGE_SUFFIX = (
    '\n\nTool search: only some of your tools are loaded. When you need a capability that none of your '
    'current tools provides, call `{search_tool_name}` with a few keywords or a short description (any '
    'language) instead of answering that you cannot. It returns the names and descriptions of the best '
    'matching tools, which you can call by their exact name from your next step on. If nothing fits, '
    'search again with other words.'
)
"""Appended to the system message in every round by default; ``{search_tool_name}`` is replaced."""
_STATE_KEY = 'toolweave.tool_search'


@dataclass
class _SearchLoop:
    """Per-request state, carried in the request context through the rounds."""

    session_id: str
    registry: dict[str, ToolCallback]
    search_tool: ToolSearchTool
    definitions_per_round: list[int] = field(default_factory=list)
    bytes_per_round: list[int] = field(default_factory=list)


class ToolSearchToolCallingAdvisor(ToolCallingAdvisor):
    """The tool loop with progressive tool disclosure; see the module docstring.

    >>> from toolweave.search import LexicalToolIndex
    >>> advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), max_results=3)
    >>> advisor.search_tool_name, advisor.accumulate_from_history
    ('toolSearchTool', True)

    Args:
        tool_calling_manager: As :class:`ToolCallingAdvisor`.
        tool_index: The template of every session's index: each session gets ``tool_index.empty_copy()``
            (same settings, no tools; all built-in indexes have it). Default
            :class:`~toolweave.search.RegexToolIndex`, as Spring's; use
            :class:`~toolweave.search.LexicalToolIndex` for Chinese/Japanese.
        tool_index_factory: Instead of ``tool_index``: a function returning a new, empty
            :class:`~toolweave.search.ToolIndex`, called once per session (and when a session's tools
            change). Use it for an index without ``empty_copy()``.
        max_results: Most tools returned per search (default 5); the model may ask for fewer with the
            search tool's ``maxResults`` argument.
        max_sessions: Conversations remembered (default 1000; ignored when ``sessions`` is given).
        sessions: Share a session store between advisors (default: a new one).
        search_tool_name: Name of the search tool (default ``toolSearchTool``).
        accumulate_from_history: Offer, and add to the session, the tools named in every
            ``toolSearchTool`` result in the prompt's messages (default ``True``, as Spring 2.0's
            ``referenceToolNameAccumulation``). ``False``: only the session's own finds count.
        system_message_suffix: Appended to the first system message (or sent as one) in every round;
            ``{search_tool_name}`` in it is replaced (default :data:`DEFAULT_SYSTEM_MESSAGE_SUFFIX`,
            ``None``: nothing).
        **loop_settings: ``order``, ``conversation_history_enabled``, ``eligibility_checker``,
            ``max_rounds``, ``max_identical_tool_calls`` as :class:`ToolCallingAdvisor`.

    Raises:
        ValueError: bad ``max_results``/``max_sessions``, both ``tool_index`` and ``tool_index_factory``,
            a blank ``system_message_suffix``, or any :class:`ToolCallingAdvisor` error; per request, a
            request tool named like the search tool.
        TypeError: ``tool_index`` has no ``empty_copy()``, ``tool_index_factory`` is not callable, or
            ``system_message_suffix`` is not a ``str``.
    """

    advisor_params = frozenset({CONVERSATION_ID})

    def __init__(
        self,
        tool_calling_manager: ToolCallingManager | None = None,
        *,
        tool_index: ToolIndex | None = None,
        tool_index_factory: ToolIndexFactory | None = None,
        max_results: int = 5,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        sessions: ToolSearchSessions | None = None,
        search_tool_name: str = TOOL_SEARCH_TOOL_NAME,
        accumulate_from_history: bool = True,
        system_message_suffix: str | None = DEFAULT_SYSTEM_MESSAGE_SUFFIX,
        **loop_settings: Any,
    ) -> None:
        super().__init__(tool_calling_manager, **loop_settings)
        self.max_results = check_max_results(max_results)
        self.sessions = sessions if sessions is not None else ToolSearchSessions(max_sessions)
        self.search_tool_name = search_tool_name
        self.accumulate_from_history = bool(accumulate_from_history)
        self.system_message_suffix = _check_suffix(system_message_suffix)
        self.tool_index, self.tool_index_factory = _index_settings(tool_index, tool_index_factory)

    def copy(self, **changes: Any) -> ToolSearchToolCallingAdvisor:
        """A new advisor with the same settings, sharing the index template (or factory) and the sessions."""
        settings: dict[str, Any] = {
            'tool_index': self.tool_index,
            'tool_index_factory': None if self.tool_index is not None else self.tool_index_factory,
            'max_results': self.max_results,
            'sessions': self.sessions,
            'search_tool_name': self.search_tool_name,
            'accumulate_from_history': self.accumulate_from_history,
            'system_message_suffix': self.system_message_suffix,
        }
        if 'tool_index' in changes:
            settings['tool_index_factory'] = None
        if 'tool_index_factory' in changes:
            settings['tool_index'] = None
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

    def evict_session(self, session_id: str) -> None:
        """Forget a conversation now (as Spring's ``evictSession``): its finds go, its index is cleared."""
        self.sessions.clear(session_id)

    # -- hooks ---------------------------------------------------------------------------------

    def do_initialize_loop(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientRequest:
        """Index the request's tools in the session's index; add the search tool to what the manager runs."""
        return self._initialize(request)

    def do_initialize_loop_stream(self, request: ChatClientRequest, chain: StreamAdvisorChain) -> ChatClientRequest:
        """As :meth:`do_initialize_loop`."""
        return self._initialize(request)

    def do_before_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientRequest:
        """Send only the search tool and the session's discovered tools this round, with the suffix."""
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

    def do_save_run_state(self, request: ChatClientRequest) -> Mapping[str, Any]:
        """Across a pause: the tools the session discovered (``{'toolSearch': {'discovered': [...]}}``)."""
        state = request.context.get(_STATE_KEY)
        if not isinstance(state, _SearchLoop):
            return {}
        return {'toolSearch': {'discovered': list(self.sessions.discovered(state.session_id))}}

    def do_restore_run_state(self, request: ChatClientRequest, extras: Mapping[str, Any]) -> None:
        """When a paused run resumes (in any process): its discovered tools join the session again."""
        state = request.context.get(_STATE_KEY)
        saved = extras.get('toolSearch')
        if isinstance(state, _SearchLoop) and isinstance(saved, Mapping):
            names = [n for n in saved.get('discovered', ()) if isinstance(n, str) and n in state.registry]
            if names:
                self.sessions.add(state.session_id, names)

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
        definitions = tuple(cb.tool_definition for cb in options.tool_callbacks)
        session_id = self.session_id(request)
        with self.sessions.using_index(session_id, definitions, self.tool_index_factory):
            pass  # indexed at loop start, so the first search does not pay for it
        search_tool = ToolSearchTool(
            self.search_tool_name, self.max_results, self.sessions, session_id, definitions, self.tool_index_factory
        )
        state = _SearchLoop(session_id, registry, search_tool)
        everything = replace(options, tool_callbacks=(search_tool, *options.tool_callbacks))
        return ChatClientRequest(Prompt(request.prompt.messages, everything), {**request.context, _STATE_KEY: state})

    def _narrow(self, request: ChatClientRequest) -> ChatClientRequest:
        state = request.context.get(_STATE_KEY)
        options = request.prompt.options
        if not isinstance(state, _SearchLoop) or not isinstance(options, ToolCallingChatOptions):
            return request
        messages = request.prompt.messages
        if self.accumulate_from_history:
            named = [n for n in _names_in_search_results(messages, self.search_tool_name) if n in state.registry]
            if named:
                self.sessions.add(state.session_id, named)
        found = [state.registry[n] for n in self.sessions.discovered(state.session_id) if n in state.registry]
        sent: Sequence[ToolCallback] = (state.search_tool, *found)
        state.definitions_per_round.append(len(sent))
        state.bytes_per_round.append(definition_bytes(sent))
        options = replace(options, tool_callbacks=tuple(sent))
        return request.with_prompt(Prompt(self._with_suffix(messages), options))

    def _with_suffix(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """``messages`` with the suffix appended to the first system message (or one added in front)."""
        if self.system_message_suffix is None:
            return messages
        suffix = self.system_message_suffix.replace('{search_tool_name}', self.search_tool_name)
        for position, message in enumerate(messages):
            if isinstance(message, SystemMessage):
                if message.text.rstrip().endswith(suffix.strip()):
                    return messages
                separator = '' if suffix[:1].isspace() else '\n\n'  # a custom suffix without its own blank line
                text = message.text + separator + suffix if message.text.strip() else suffix.strip()
                return (*messages[:position], replace(message, text=text), *messages[position + 1 :])
        return (SystemMessage(suffix.strip()), *messages)

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
        return replace(response, chat_response=replace(chat, metadata=metadata))


def _index_settings(
    tool_index: ToolIndex | None, tool_index_factory: ToolIndexFactory | None
) -> tuple[ToolIndex | None, ToolIndexFactory]:
    """``(template or None, factory)`` from the constructor's two index arguments."""
    if tool_index_factory is None:
        template = tool_index if tool_index is not None else RegexToolIndex()
        return template, index_factory(template)
    if tool_index is not None:
        raise ValueError('pass tool_index or tool_index_factory, not both')
    if not callable(tool_index_factory):
        raise TypeError(f'tool_index_factory must be a function returning a ToolIndex, got {tool_index_factory!r}')
    return None, tool_index_factory


def _check_suffix(suffix: object) -> str | None:
    if suffix is None:
        return None
    if not isinstance(suffix, str):
        raise TypeError(f'system_message_suffix must be a str or None, not {type(suffix).__name__}')
    if not suffix.strip():
        raise ValueError('system_message_suffix is blank; pass None to send no suffix')
    return suffix


def _names_in_search_results(messages: Iterable[Message], search_tool_name: str) -> list[str]:
    """Tool names in the results of ``search_tool_name`` calls in ``messages``, oldest first.

    Reads this advisor's result (``{"tools": [{"name": ...}, ...]}``) and Spring's (``["name", ...]``);
    anything else (an error text) names nothing. The tool name is compared case-insensitively, as Spring.
    """
    wanted = search_tool_name.casefold()
    names: list[str] = []
    for message in messages:
        if isinstance(message, ToolResponseMessage):
            for response in message.responses:
                if response.name.casefold() == wanted:
                    names.extend(_result_names(response.response_data))
    return names


def _result_names(data: str) -> list[str]:
    try:
        result = orjson.loads(data)
    except orjson.JSONDecodeError:
        return []
    items = result.get('tools') if isinstance(result, Mapping) else result
    if not isinstance(items, list):
        return []
    names = (item.get('name') if isinstance(item, Mapping) else item for item in items)
    return [name for name in names if isinstance(name, str)]


def definition_bytes(callbacks: Iterable[ToolCallback]) -> int:
    """Size in bytes of the callbacks' definitions as the JSON of an OpenAI ``tools`` array.

    >>> definition_bytes([])
    2
    """
    return len(orjson.dumps([cb.tool_definition.to_openai() for cb in callbacks]))
