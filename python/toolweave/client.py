"""``ChatClient``: the fluent front door (Spring AI ``ChatClient``/``DefaultChatClient``).

>>> client = ChatClient.builder(model).default_system('Be brief.').build()      # doctest: +SKIP
>>> client.prompt().user('Weather in Paris?').tools(get_weather).call().content() # doctest: +SKIP

Rules (Spring AI ``DefaultChatClient``): a ``ToolCallingAdvisor`` is registered automatically unless
one is already there or ``tool_calling_advisor_auto_register(False)`` (alias
``disable_tool_calling_advisor()``) was called; more than one raises ``ValueError`` listing them with
their orders; when a memory advisor sits below the tool advisor (higher order, inside the loop), the
tool advisor's own conversation history is turned off for that request, since the memory rebuilds
it. Per-request settings never change the builder's defaults. The terminal model advisors sit at
``LOWEST_PRECEDENCE``.

Run events (:mod:`toolweave.events`): ``call(on_event=handler)``, ``acall(on_event=handler)`` and
``stream().events()``. Streams iterate with ``async for`` on your event loop, or with a plain ``for``
in synchronous code (the stream then runs on a private event loop in that thread, one item at a time).

Paused runs (:mod:`toolweave.approvals`): a run whose tool calls wait for a decision returns a
response with ``is_paused()`` true, its ``pending_tool_calls()`` and ``run_state()`` (streaming: an
``ApprovalRequested`` event, then the end). With ``run_state_store(store)`` on the builder, paused
states are saved there. ``client.resume(state_or_run_id, decisions)`` (or ``prompt().resume(...)``)
gives a request that ``call()``, ``acall()`` or ``stream()`` continue; starting it claims the run in
the store (or, without one, in this process), so a run continues once.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import inspect
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from toolweave.advisors.api import Advisor, ChatClientRequest, ChatClientResponse
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, UserMessage
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt

if TYPE_CHECKING:  # asyncio, the loop engine, tool binding, events and structured output load on first use (#14)
    import asyncio
    from collections.abc import Coroutine

    from toolweave.advisors.chain import DefaultAroundAdvisorChain
    from toolweave.advisors.structured_output import StructuredOutputAdvisor
    from toolweave.advisors.tool_calling import ToolCallingAdvisor
    from toolweave.approvals import Decision, PendingToolCall
    from toolweave.chat.content import Media
    from toolweave.chat.model import ChatModel
    from toolweave.chat.response import ChatResponse
    from toolweave.events import EventHandler, RunEvent
    from toolweave.runstate.base import InMemoryRunStateStore, RunStateStore
    from toolweave.runstate.state import Resumption, RunState
    from toolweave.structured import ResponseEntity, Strategy
    from toolweave.tools.callback import ToolCallback
    from toolweave.tools.manager import ToolCallingManager

__all__ = [
    'CallResponse',
    'ChatClient',
    'ChatClientBuilder',
    'ChatClientRequestSpec',
    'StreamIterator',
    'StreamResponse',
]

logger = logging.getLogger('toolweave.events')
_T = TypeVar('_T')
_V = TypeVar('_V')
_E = TypeVar('_E')
_RESTATE = 'Now give exactly that answer again, as JSON in the requested structure.'
_CLOSE_TIMEOUT = 30.0
"""Seconds a synchronous stream waits for its upstream to close (or a cancelled step to stop) before giving up."""


_LOCAL_CLAIMS_LOCK = threading.Lock()


def _local_claims() -> InMemoryRunStateStore:
    """Where runs resumed by clients without a store are claimed: once per run within this process.

    Made on first use (the run-state modules load with the first resumed run), under a lock so that
    every thread claims in the same store.
    """
    with _LOCAL_CLAIMS_LOCK:
        return _local_claims_store()


@functools.cache
def _local_claims_store() -> InMemoryRunStateStore:
    from toolweave.runstate.base import InMemoryRunStateStore

    return InMemoryRunStateStore()


def _check_approved_tools(resume: Resumption, manager: ToolCallingManager, options: ChatOptions | None) -> None:
    """Raise ``MissingToolError`` when an approved call's tool is neither the request's nor one its resolver finds."""
    from toolweave.approvals import Approve
    from toolweave.runstate.state import MissingToolError

    approved = {c.name for c in resume.state.pending if isinstance(resume.decisions.get(c.id), Approve)}
    if not approved:
        return
    missing = approved - {d.name for d in manager.resolve_tool_definitions(options)}
    resolver = getattr(manager, 'tool_callback_resolver', None)
    if resolver is not None and getattr(manager, 'resolution_fallback_enabled', False):
        missing = {name for name in missing if resolver.resolve(name) is None}
    if missing:
        raise MissingToolError(sorted(missing))


@dataclass(frozen=True)
class _Defaults:
    system: str | None = None
    tools: tuple[object, ...] = ()
    advisors: tuple[Advisor, ...] = ()
    options: ChatOptions | None = None
    tool_context: Mapping[str, Any] | None = None
    tool_calling_advisor: ToolCallingAdvisor | None = None
    auto_tool_advisor: bool = True
    run_state_store: RunStateStore | None = None


class ChatClient:
    """A configured client over one ``ChatModel``; cheap to keep and share."""

    def __init__(self, model: ChatModel, defaults: _Defaults | None = None) -> None:
        self.model = _not_none(model, 'model')
        self._defaults = defaults or _Defaults()

    @staticmethod
    def builder(model: ChatModel) -> ChatClientBuilder:
        """Start configuring a client for ``model``."""
        return ChatClientBuilder(model)

    @staticmethod
    def create(model: ChatModel) -> ChatClient:
        """A client with no defaults."""
        return ChatClient(model)

    def prompt(self, user: str | None = None) -> ChatClientRequestSpec:
        """Start a request, optionally with the user text.

        Raises:
            TypeError: ``user`` is not a ``str`` (e.g. ``bytes`` or a number).
        """
        spec = ChatClientRequestSpec(self.model, self._defaults)
        return spec.user(user) if user is not None else spec

    def resume(self, run: RunState | str, decisions: Mapping[str, Decision]) -> ChatClientRequestSpec:
        """A request continuing a paused run with the client's default tools: ``prompt().resume(run, decisions)``."""
        return self.prompt().resume(run, decisions)


class ChatClientBuilder:
    """Defaults applied to every request of the client being built."""

    def __init__(self, model: ChatModel) -> None:
        self._model = _not_none(model, 'model')
        self._defaults = _Defaults()

    def default_system(self, text: str) -> ChatClientBuilder:
        """System message of every request."""
        _not_none(text, 'text')
        self._defaults = replace(self._defaults, system=text)
        return self

    def default_tools(self, *tools: object) -> ChatClientBuilder:
        """Tools of every request (anything ``.tools()`` accepts; an unbound method is refused here, as there)."""
        _no_none(tools, 'tools')
        _check_functions(tools)
        self._defaults = replace(self._defaults, tools=self._defaults.tools + tools)
        return self

    def default_advisors(self, *advisors: Advisor) -> ChatClientBuilder:
        """Advisors of every request."""
        _check_advisors(advisors)
        self._defaults = replace(self._defaults, advisors=self._defaults.advisors + advisors)
        return self

    def default_options(self, options: ChatOptions) -> ChatClientBuilder:
        """Model options of every request."""
        _not_none(options, 'options')
        self._defaults = replace(self._defaults, options=options)
        return self

    def default_tool_context(self, context: Mapping[str, Any]) -> ChatClientBuilder:
        """Tool context of every request."""
        _not_none(context, 'context')
        self._defaults = replace(self._defaults, tool_context=dict(context))
        return self

    def tool_calling_advisor(self, advisor: ToolCallingAdvisor) -> ChatClientBuilder:
        """Template for the auto-registered tool advisor (copied per request, never mutated)."""
        _not_none(advisor, 'advisor')
        self._defaults = replace(self._defaults, tool_calling_advisor=advisor)
        return self

    def tool_calling_advisor_auto_register(self, enabled: bool = True) -> ChatClientBuilder:
        """Whether a ``ToolCallingAdvisor`` is added to requests that have none (default ``True``).

        With ``False`` tool calls reach the caller unless a request adds its own tool advisor.
        """
        self._defaults = replace(self._defaults, auto_tool_advisor=bool(enabled))
        return self

    def run_state_store(self, store: RunStateStore) -> ChatClientBuilder:
        """Save paused runs in ``store``, resume runs by id from it, and claim resumed runs there.

        E.g. ``SqliteRunStateStore('runs.db')`` (shared by the processes on one machine) or
        ``RedisRunStateStore(url=...)`` (several machines).

        Raises:
            TypeError: ``store`` is not a :class:`~toolweave.runstate.RunStateStore`.
        """
        from toolweave.runstate.base import RunStateStore

        if not isinstance(store, RunStateStore):
            raise TypeError(f'store must be a RunStateStore (save, load, claim, delete), got {type(store).__name__}')
        self._defaults = replace(self._defaults, run_state_store=store)
        return self

    def disable_tool_calling_advisor(self) -> ChatClientBuilder:
        """Same as ``tool_calling_advisor_auto_register(False)``."""
        return self.tool_calling_advisor_auto_register(False)

    def build(self) -> ChatClient:
        """The client."""
        return ChatClient(self._model, self._defaults)


class ChatClientRequestSpec:
    """One request being assembled; every method returns ``self`` for chaining."""

    def __init__(self, model: ChatModel, defaults: _Defaults) -> None:
        self._model = model
        self._defaults = defaults
        self._system = defaults.system
        self._messages: list[Message] = []
        self._tools: list[object] = list(defaults.tools)
        self._advisors: list[Advisor] = list(defaults.advisors)
        self._options = defaults.options
        self._tool_context: dict[str, Any] = dict(defaults.tool_context or {})
        self._advisor_params: dict[str, Any] = {}
        self._resume: Resumption | None = None

    def system(self, text: str) -> ChatClientRequestSpec:
        """Replace the system message."""
        self._system = _not_none(text, 'text')
        return self

    def user(self, text: str, media: Sequence[Media] = ()) -> ChatClientRequestSpec:
        """Append a user message, with content parts after its text (Spring ``.user(u -> u.text(..).media(..))``).

        >>> spec.user('What is in this picture?', media=[Media.from_path('cat.png')])  # doctest: +SKIP

        Raises:
            ValueError: ``text`` is ``None``. TypeError: ``text`` is not a ``str``, or a part is not a ``Media``.
        """
        _not_none(text, 'text')
        if not isinstance(text, str):
            raise TypeError(f'the user text must be a str, got {type(text).__name__}: {text!r:.80}')
        self._messages.append(UserMessage(text, media=tuple(media)))
        return self

    def messages(self, *messages: Message) -> ChatClientRequestSpec:
        """Append messages (e.g. earlier conversation)."""
        _no_none(messages, 'messages')
        self._messages.extend(messages)
        return self

    def tools(self, *tools: object) -> ChatClientRequestSpec:
        """Add tools: ``@tool`` functions, objects with ``@tool`` methods, ``ToolCallback``s, providers, lists.

        Raises:
            TypeError: a tool is ``None`` or an unbound method (``Class.method``); other problems (say,
                parameters no JSON Schema describes) when the request runs.
        """
        _no_none(tools, 'tools')
        _check_functions(tools)
        self._tools.extend(tools)
        return self

    def tool_context(self, context: Mapping[str, Any]) -> ChatClientRequestSpec:
        """Add side-channel values for tools that declare a ``ToolContext`` parameter."""
        _not_none(context, 'context')
        self._tool_context.update(context)
        return self

    def options(self, options: ChatOptions) -> ChatClientRequestSpec:
        """Model options for this request (replace the defaults)."""
        self._options = _not_none(options, 'options')
        return self

    def advisors(self, *advisors: Advisor, **params: Any) -> ChatClientRequestSpec:
        """Add advisors and advisor parameters for this request.

        >>> spec.advisors(MessageChatMemoryAdvisor(memory), chat_memory_conversation_id='user-42')  # doctest: +SKIP

        Raises:
            ValueError: an advisor is ``None``.
            TypeError: an argument is not an ``Advisor``.
        """
        _check_advisors(advisors)
        self._advisors.extend(advisors)
        self._advisor_params.update(params)
        return self

    def advisor_param(self, key: str, value: Any) -> ChatClientRequestSpec:
        """Put a parameter in the request context (e.g. ``chat_memory_conversation_id``)."""
        _not_none(key, 'key')
        self._advisor_params[key] = value
        return self

    def resume(self, run: RunState | str, decisions: Mapping[str, Decision]) -> ChatClientRequestSpec:
        """Continue a paused run with one decision per pending call, keyed by call id.

        The request needs the run's tools (the same names), and takes no new messages; advisors and
        options are this request's. ``call()``, ``acall()`` or ``stream()`` then run it: the approved
        calls run first, the denied and deferred ones get their responses, and the loop goes on with
        its rounds, usage, limits and retry budgets counted from where it paused.

        Args:
            run: The :class:`~toolweave.runstate.RunState` (e.g. ``RunState.from_json(text)``), or its
                run id in the client's ``run_state_store``.
            decisions: ``{call_id: Approve() | Deny(message) | DeferredResult(value)}``.

        Raises:
            UnknownToolCallError, MissingDecisionError, InvalidDecisionError: the decisions do not fit
                the pending calls (nothing is claimed or changed).
            RunStateNotFoundError, RunAlreadyResumedError: by run id, the store has no such paused run.
            ValueError: a run id without a ``run_state_store``.
        """
        from toolweave.runstate.state import Resumption, RunState

        if isinstance(run, str):
            store = self._defaults.run_state_store
            if store is None:
                raise ValueError('resume by run id needs a client with a run_state_store; pass the RunState instead')
            state = store.load(run)
        elif isinstance(run, RunState):
            state = run
        else:
            raise TypeError(f'run must be a RunState or a run id, got {type(run).__name__}')
        state.check_decisions(decisions)
        self._resume = Resumption(state, dict(decisions))
        return self

    def call(self, *, on_event: EventHandler | None = None) -> CallResponse:
        """Run the chain, blocking.

        Args:
            on_event: Called with every run event (:mod:`toolweave.events`), in order, in this thread.
                An exception it raises is logged (logger ``toolweave.events``) and the run goes on.
        """
        request, chain = self._assemble(stream=False, on_event=on_event)
        return CallResponse(self._saved(chain.next_call(request)), self)

    async def acall(self, *, on_event: EventHandler | None = None) -> CallResponse:
        """Run the chain on the running event loop.

        Args:
            on_event: As :meth:`call`; called on the event loop's thread (also for tools run in worker threads).
        """
        request, chain = self._assemble(stream=False, on_event=on_event)
        return CallResponse(self._saved(await chain.anext_call(request)), self)

    def stream(self) -> StreamResponse:
        """Run the chain streaming; iterate one of the result's views: ``content()``, ``events()``, ``chat_responses()``."""
        request, chain = self._assemble(stream=True)

        def start(on_event: EventHandler | None) -> AsyncIterator[ChatClientResponse]:
            if on_event is None:
                responses = chain.next_stream(request)
            else:
                from toolweave.events import ON_EVENT_CONTEXT_KEY

                responses = chain.next_stream(
                    replace(request, context={**request.context, ON_EVENT_CONTEXT_KEY: on_event})
                )
            return self._saving(responses) if self._defaults.run_state_store is not None else responses

        return StreamResponse(start)

    def _saved(self, response: ChatClientResponse) -> ChatClientResponse:
        """``response``, its run state saved in the client's store when the run paused."""
        store = self._defaults.run_state_store
        state = _run_state(response.chat_response)
        if store is not None and state is not None:
            store.save(state)
        return response

    async def _saving(self, responses: AsyncIterator[ChatClientResponse]) -> AsyncIterator[ChatClientResponse]:
        try:
            async for response in responses:
                yield self._saved(response)
        finally:
            await _aclose(responses)

    def entity(
        self,
        output_type: type[_E],
        *,
        strategy: Strategy | None = None,
        max_retries: int = 2,
        on_event: EventHandler | None = None,
    ) -> _E:
        """Run the request asking for an ``output_type`` answer from the first round; the validated value.

        ``output_type``: a pydantic model, dataclass, ``TypedDict``, ``list[T]``, enum or primitive. Tools run
        first, the structured answer comes last; an invalid answer is asked again with its errors up to
        ``max_retries`` times (:class:`~toolweave.advisors.structured_output.StructuredOutputAdvisor`).
        ``strategy`` (``'native'``, ``'tool'``, ``'prompted'``) defaults to the model's
        (:func:`~toolweave.structured.default_strategy`).

        Raises:
            StructuredOutputValidationError: still invalid after ``max_retries`` re-asks (carries the last raw
                answer, its errors and the summed usage).
            TypeError: pydantic cannot make a JSON Schema of ``output_type``.
        """
        return self.response_entity(output_type, strategy=strategy, max_retries=max_retries, on_event=on_event).entity

    def response_entity(
        self,
        output_type: type[_E],
        *,
        strategy: Strategy | None = None,
        max_retries: int = 2,
        on_event: EventHandler | None = None,
    ) -> ResponseEntity[_E]:
        """:meth:`entity` with the run's final response (Spring ``responseEntity``): usage sums every attempt."""
        from toolweave.advisors.structured_output import run_entity

        return run_entity(*self._structured(output_type, strategy, max_retries, stream=False, on_event=on_event))

    async def aentity(
        self,
        output_type: type[_E],
        *,
        strategy: Strategy | None = None,
        max_retries: int = 2,
        on_event: EventHandler | None = None,
    ) -> _E:
        """Async :meth:`entity`."""
        return (
            await self.aresponse_entity(output_type, strategy=strategy, max_retries=max_retries, on_event=on_event)
        ).entity

    async def aresponse_entity(
        self,
        output_type: type[_E],
        *,
        strategy: Strategy | None = None,
        max_retries: int = 2,
        on_event: EventHandler | None = None,
    ) -> ResponseEntity[_E]:
        """Async :meth:`response_entity`."""
        from toolweave.advisors.structured_output import arun_entity

        return await arun_entity(*self._structured(output_type, strategy, max_retries, stream=False, on_event=on_event))

    def stream_entity(
        self, output_type: type[_E], *, strategy: Strategy | None = None, max_retries: int = 2
    ) -> StreamIterator[_E]:
        """Stream the request; iterate validated partial ``output_type`` values as the JSON arrives, the whole one last.

        A partial value is yielded when the answer so far (read by the core's partial parser) validates with
        pydantic's ``experimental_allow_partial`` and differs from the previous one; a model still missing a
        required field gives none yet. After an invalid answer is asked again, the values start over.
        """
        from toolweave.advisors.structured_output import stream_entity

        request, chain, advisor = self._structured(output_type, strategy, max_retries, stream=True)
        return StreamIterator(lambda: stream_entity(request, chain, advisor))

    def _structured(
        self,
        output_type: type[_E],
        strategy: Strategy | None,
        max_retries: int,
        *,
        stream: bool,
        on_event: EventHandler | None = None,
    ) -> tuple[ChatClientRequest, DefaultAroundAdvisorChain, StructuredOutputAdvisor[_E]]:
        from toolweave.advisors.structured_output import StructuredOutputAdvisor
        from toolweave.structured import OutputType, default_strategy, prepare

        output = OutputType[_E].of(output_type)
        chosen = strategy or default_strategy(self._model)
        advisor = StructuredOutputAdvisor(output, chosen, max_retries)
        request, chain = self._assemble(stream=stream, on_event=on_event, extra=(advisor,))
        return request.with_prompt(prepare(request.prompt, output, chosen)), chain, advisor

    def _restated(self, answer: str) -> ChatClientRequestSpec:
        """This request continued by ``answer`` and a request to restate it (``CallResponse.entity``), without tools."""
        spec = copy.copy(self)
        spec._messages = [*self._messages, AssistantMessage(answer), UserMessage(_RESTATE)]
        spec._tools = []
        if isinstance(self._options, ToolCallingChatOptions):
            spec._options = replace(self._options, tool_callbacks=(), tool_names=frozenset())
        return spec

    def _assemble(
        self, *, stream: bool, on_event: EventHandler | None = None, extra: Sequence[Advisor] = ()
    ) -> tuple[ChatClientRequest, DefaultAroundAdvisorChain]:
        from toolweave.advisors.chain import DefaultAroundAdvisorChain
        from toolweave.advisors.model_advisors import ChatModelCallAdvisor, ChatModelStreamAdvisor
        from toolweave.events import ON_EVENT_CONTEXT_KEY
        from toolweave.runstate.state import RESUME_CONTEXT_KEY

        messages: list[Message] = [SystemMessage(self._system)] if self._system else []
        messages.extend(self._messages)
        prompt = Prompt(tuple(messages), self._tool_options())
        terminal: Advisor = ChatModelStreamAdvisor(self._model) if stream else ChatModelCallAdvisor(self._model)
        advisors = self._chain_advisors()
        chain = DefaultAroundAdvisorChain([*advisors, *extra, terminal])
        context = dict(self._advisor_params)
        if self._resume is not None:
            prompt = Prompt((), prompt.options)  # the tool loop continues the run's own messages
            context[RESUME_CONTEXT_KEY] = self._claimed(advisors, prompt.options)
        if on_event is not None:
            context[ON_EVENT_CONTEXT_KEY] = _logging_errors(_check_handler(on_event))
        return ChatClientRequest(prompt, context), chain

    def _claimed(self, advisors: list[Advisor], options: ChatOptions | None) -> Resumption:
        """The resumption, once its run is claimed (in the client's store, else in this process).

        Everything that can refuse the request is checked before the claim, so a refused request leaves
        the run resumable.

        Raises:
            ValueError: the request has new messages, or no tool advisor to continue the run.
            MissingToolError: an approved call's tool is not among the request's tools.
            RunAlreadyResumedError: the run was resumed before.
        """
        from toolweave.advisors.tool_calling import ToolCallingAdvisor

        resume = self._resume
        assert resume is not None
        if self._messages:
            raise ValueError('a resumed run takes no new messages: resume it first, then send them in a new request')
        loop = next((a for a in advisors if isinstance(a, ToolCallingAdvisor)), None)
        if loop is None:
            raise ValueError('resuming a run needs a ToolCallingAdvisor on the chain (auto-registration is off)')
        _check_approved_tools(resume, loop.tool_calling_manager, options)
        (self._defaults.run_state_store or _local_claims()).claim(resume.state.run_id)
        return resume

    def _tool_options(self) -> ToolCallingChatOptions:
        """The request's options as ``ToolCallingChatOptions``, with the model's default tools when it has none.

        A model's default options (``default_options``, as providers take them) that carry tools are
        merged as the provider merges them (the request's tools, or else the defaults'; tool context
        key by key, the request's winning), so the tools the model is sent are the tools the loop runs.
        """
        base = self._options
        options = base if isinstance(base, ToolCallingChatOptions) else None
        callbacks = (*(options.tool_callbacks if options else ()), *_callbacks_of(self._tools))
        names = options.tool_names if options else frozenset()
        context = {**(options.tool_context if options else {}), **self._tool_context}
        defaults = getattr(self._model, 'default_options', None)
        if isinstance(defaults, ToolCallingChatOptions):
            callbacks = callbacks or defaults.tool_callbacks
            names = names or defaults.tool_names
            context = {**defaults.tool_context, **context}
        tools: dict[str, Any] = {
            'tool_callbacks': _unique_names(callbacks),
            'tool_names': names,
            'tool_context': context,
        }
        if options is not None:
            return replace(options, **tools)
        values = {f.name: getattr(base, f.name) for f in fields(base)} if base is not None else {}
        return ToolCallingChatOptions(**values, **tools)  # built once (each build checks every tool)

    def _chain_advisors(self) -> list[Advisor]:
        from toolweave.advisors.tool_calling import ToolCallingAdvisor

        advisors = list(self._advisors)
        tool_advisors = [a for a in advisors if isinstance(a, ToolCallingAdvisor)]
        if len(tool_advisors) > 1:
            names = ', '.join(f'{type(a).__name__} (order {a.order})' for a in tool_advisors)
            raise ValueError(f'Only one ToolCallingAdvisor is allowed on a chain, found {len(tool_advisors)}: {names}')
        if not tool_advisors and self._defaults.auto_tool_advisor:
            template = self._defaults.tool_calling_advisor
            advisors.append(template.copy() if template is not None else ToolCallingAdvisor())
        for index, advisor in enumerate(advisors):
            if isinstance(advisor, ToolCallingAdvisor) and _memory_below(advisor, advisors):
                advisors[index] = advisor.copy(conversation_history_enabled=False)
        return advisors


def _not_none(value: _V | None, name: str) -> _V:
    """``value``; ``ValueError`` naming ``name`` when it is ``None``."""
    if value is None:
        raise ValueError(f'{name} must not be None')
    return value


def _no_none(values: tuple[object, ...], name: str) -> None:
    """``ValueError`` naming ``name`` when one of ``values`` is ``None``."""
    if any(value is None for value in values):
        raise ValueError(f'{name} must not contain None')


def _check_advisors(advisors: tuple[Advisor, ...]) -> None:
    """``ValueError`` for a ``None`` advisor, ``TypeError`` for something that is not an ``Advisor``."""
    _no_none(advisors, 'advisors')
    for advisor in advisors:
        if not isinstance(advisor, Advisor):
            raise TypeError(f'advisors() takes Advisor instances, got {type(advisor).__name__}')


def _memory_below(tool_advisor: ToolCallingAdvisor, advisors: list[Advisor]) -> bool:
    """Whether a memory advisor runs inside the tool loop (so the tool advisor's own history must go)."""
    from toolweave.advisors.memory import BaseChatMemoryAdvisor

    if not tool_advisor.conversation_history_enabled:
        return False
    return any(isinstance(a, BaseChatMemoryAdvisor) and a.order > tool_advisor.order for a in advisors)


def _callbacks_of(tools: list[object]) -> tuple[ToolCallback, ...]:
    """``to_tool_callbacks(*tools)``, reusing the callbacks made for the same plain functions recently."""
    from toolweave.tools.provider import to_tool_callbacks

    out: list[ToolCallback] = []
    for item in tools:
        out.extend(_function_callbacks(item) if inspect.isfunction(item) else to_tool_callbacks(item))
    return tuple(out)


def _check_functions(tools: Iterable[object]) -> None:
    """Reject an unbound method (``Class.method``) among ``tools`` (nested lists too) where it is given.

    Only that: a function's schema is made when the request runs (its type hints may name classes defined later).

    Raises:
        TypeError: an unbound method (:func:`~toolweave.tools.method.check_not_unbound_method`).
    """
    from toolweave.tools.method import check_not_unbound_method

    for item in tools:
        if isinstance(item, (list, tuple)):
            _check_functions(item)
        elif inspect.isfunction(item):
            check_not_unbound_method(item)


@functools.lru_cache(maxsize=256)
def _function_callbacks(function: Callable[..., Any]) -> tuple[ToolCallback, ...]:
    """The (immutable) callbacks of a plain function: made once, not per request; at most 256 functions kept."""
    from toolweave.tools.provider import to_tool_callbacks

    return to_tool_callbacks(function)


def _unique_names(callbacks: tuple[ToolCallback, ...]) -> tuple[ToolCallback, ...]:
    """``callbacks`` unchanged; tools sharing a name raise one error naming every such name."""
    from toolweave.tools.provider import check_unique_tool_names

    check_unique_tool_names(callbacks)
    return callbacks


class CallResponse:
    """The outcome of a blocking or async call."""

    def __init__(self, response: ChatClientResponse, spec: ChatClientRequestSpec | None = None) -> None:
        self._response = response
        self._spec = spec

    def __repr__(self) -> str:
        chat = self._response.chat_response
        usage = chat.usage if chat is not None else None
        return f'CallResponse(content={self.content()!r}, usage={usage!r})'

    def content(self) -> str:
        """The text of the first generation (``''`` when there is none)."""
        chat = self._response.chat_response
        return chat.text if chat is not None else ''

    def chat_response(self) -> ChatResponse:
        """The full response (usage summed over the tool rounds).

        Raises:
            ValueError: the advisor chain ended without a ``ChatResponse`` (an advisor returned none);
                ``chat_client_response().chat_response`` is then ``None``.
        """
        chat = self._response.chat_response
        if chat is None:
            raise ValueError('the advisor chain returned no ChatResponse (see chat_client_response())')
        return chat

    def chat_client_response(self) -> ChatClientResponse:
        """The response with the advisor context."""
        return self._response

    def entity(self, output_type: type[_E], *, strategy: Strategy | None = None, max_retries: int = 2) -> _E:
        """The answer as a validated ``output_type`` (Spring ``call().entity(Type)``).

        The finished answer is validated as it is (no model call when it already is the JSON of the type);
        otherwise the conversation goes on with one structured-output run (see
        :meth:`ChatClientRequestSpec.entity`) asking the model to restate its answer, without the tools
        (they ran already). To ask for the type from the first round, use ``prompt(...).entity(T)``.

        Raises:
            StructuredOutputValidationError: the restated answer is still invalid after ``max_retries`` re-asks.
            OutputValidationError: the answer is invalid and this response has no request to continue.
        """
        from toolweave.structured import OutputType, OutputValidationError

        output = OutputType[_E].of(output_type)
        try:
            return output.validate(self.content())
        except OutputValidationError:
            if self._spec is None:
                raise
        return self._spec._restated(self.content()).entity(output_type, strategy=strategy, max_retries=max_retries)

    async def aentity(self, output_type: type[_E], *, strategy: Strategy | None = None, max_retries: int = 2) -> _E:
        """Async :meth:`entity`."""
        from toolweave.structured import OutputType, OutputValidationError

        output = OutputType[_E].of(output_type)
        try:
            return output.validate(self.content())
        except OutputValidationError:
            if self._spec is None:
                raise
        restated = self._spec._restated(self.content())
        return await restated.aentity(output_type, strategy=strategy, max_retries=max_retries)

    def is_paused(self) -> bool:
        """Whether the run paused for decisions on tool calls (finish reason ``paused``)."""
        return self.run_state() is not None

    def run_state(self) -> RunState | None:
        """The paused run's state (``None`` when the run ended); resume it with ``client.resume(state, ...)``."""
        return _run_state(self._response.chat_response)

    def pending_tool_calls(self) -> tuple[PendingToolCall, ...]:
        """The calls the paused run waits for (id, name, parsed arguments, reason); ``()`` when not paused."""
        state = self.run_state()
        return state.pending if state is not None else ()


def _run_state(chat: ChatResponse | None) -> RunState | None:
    """The run state a paused run's response carries (metadata ``runState``)."""
    from toolweave.advisors._rounds import RUN_STATE_METADATA_KEY
    from toolweave.runstate.state import RunState

    state = chat.metadata.get(RUN_STATE_METADATA_KEY) if chat is not None else None
    return state if isinstance(state, RunState) else None


class StreamResponse:
    """A streaming call; iterate one of its views, once, with ``async for`` or (in synchronous code) ``for``.

    >>> for piece in client.prompt('Weather in Oslo?').tools(get_weather).stream().content():  # doctest: +SKIP
    ...     print(piece, end='')

    Args:
        start: Starts the run: the chain's responses, given the run's event handler (or ``None``).
    """

    def __init__(self, start: Callable[[EventHandler | None], AsyncIterator[ChatClientResponse]]) -> None:
        self._start = start
        self._started = False

    def _responses(self, on_event: EventHandler | None = None) -> AsyncIterator[ChatClientResponse]:
        if self._started:
            raise RuntimeError('this stream was iterated already: call stream() again for another run')
        self._started = True
        return self._start(on_event)

    def chat_client_responses(self) -> StreamIterator[ChatClientResponse]:
        """Every response with its advisor context."""
        return StreamIterator(self._chat_client_responses)

    def chat_responses(self) -> StreamIterator[ChatResponse]:
        """Every chunk; the last ones carry the finish reason and the usage summed over rounds."""
        return StreamIterator(self._chat_responses)

    def content(self) -> StreamIterator[str]:
        """The answer text as it arrives (empty pieces skipped); text only, never tool calls."""
        return StreamIterator(self._content)

    def events(self) -> StreamIterator[RunEvent]:
        """The run as typed events (:mod:`toolweave.events`), as they happen, ``RunFinished`` last.

        Tool results arrive while the tools run (not with the next chunk). An error of the run is
        raised after the events that came before it.
        """
        return StreamIterator(self._events)

    def collect(self) -> str:
        """Blocking helper: run the stream to the end and return the whole text.

        Raises:
            RunPausedError: the run paused for decisions on tool calls (its ``state`` resumes it).
            RuntimeError: called from a running event loop (there, ``await stream.acollect()``).
        """
        _refuse_in_running_loop(
            'StreamResponse.collect()', 'use `await stream.acollect()` or `async for piece in stream.content()`'
        )
        return ''.join(StreamIterator(self._collected))

    async def acollect(self) -> str:
        """Run the stream to the end on the running event loop and return the whole text.

        Raises:
            RunPausedError: the run paused for decisions on tool calls (its ``state`` resumes it).
        """
        return ''.join([piece async for piece in self._collected()])

    async def _collected(self) -> AsyncIterator[str]:
        """The text pieces of :meth:`content`, then ``RunPausedError`` if the run paused (a text alone would hide it)."""
        from toolweave.runstate.state import RunPausedError

        pieces: list[str] = []
        state: RunState | None = None
        chats = self._chat_responses()
        try:
            async for chat in chats:
                if chat.text:
                    pieces.append(chat.text)
                    yield chat.text
                state = _run_state(chat) or state
        finally:
            await _aclose(chats)
        if state is not None:
            raise RunPausedError(state, ''.join(pieces))

    async def _chat_client_responses(self) -> AsyncIterator[ChatClientResponse]:
        responses = self._responses()
        try:
            async for response in responses:
                yield response
        finally:
            await _aclose(responses)

    async def _chat_responses(self) -> AsyncIterator[ChatResponse]:
        responses = self._responses()
        try:
            async for response in responses:
                if response.chat_response is not None:
                    yield response.chat_response
        finally:
            await _aclose(responses)

    async def _content(self) -> AsyncIterator[str]:
        chats = self._chat_responses()
        try:
            async for chat in chats:
                if chat.text:
                    yield chat.text
        finally:
            await _aclose(chats)

    async def _events(self) -> AsyncIterator[RunEvent]:
        from toolweave.tools._concurrent import carrying

        queue = _EventQueue()
        responses = self._responses(queue)

        async def run() -> None:
            try:
                async for _ in responses:
                    pass
            finally:
                await _aclose(responses)

        # the run goes on (tools too) while the consumer waits for events; a tool's KeyboardInterrupt or
        # SystemExit is carried to the consumer instead of stopping the event loop from inside the task
        queue.start(carrying(run()))
        try:
            while (event := await queue.get()) is not None:
                yield event
                queue.handled(event)  # the consumer is back: this event was handled
            if queue.run_failed():
                raise queue.run_error()  # after the events before it; no local here holds it (see run_error)
        finally:
            await queue.stop()


class _EventQueue:
    """The events of a stream on their way to ``events()``, and the pacing of the run that emits them.

    The loop awaits :meth:`drained` after each chunk's events; it waits until the consumer has handled
    every event holding a live value (a :class:`~toolweave.events.ToolCallArgumentsDelta`, whose
    ``partial`` the next fragment updates in place), and never lets more than :data:`_EVENTS_AHEAD`
    events wait. Other events (text) go on without a hand-off per chunk, so the consumer takes them in
    batches. A deque and two futures on the stream's loop, used from that loop only.
    """

    def __init__(self) -> None:
        from collections import deque

        from toolweave.events import ToolCallArgumentsDelta

        self._live_kind = ToolCallArgumentsDelta
        self._items: deque[RunEvent | None] = deque()
        self._unhandled = 0
        self._live = 0  # unhandled events holding a live value
        self._getter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._run: asyncio.Future[None] | None = None

    def start(self, run: Coroutine[Any, Any, None]) -> None:
        """Run ``run`` as a task on the running loop; the queue ends (``None``) when it does."""
        import asyncio

        self._run = asyncio.ensure_future(run)
        self._run.add_done_callback(lambda _: self.put(None))

    def run_failed(self) -> bool:
        """Whether the finished run raised (``CancelledError`` when it was cancelled)."""
        return self._run is not None and self._run.exception() is not None

    def run_error(self) -> BaseException:
        """The finished run's exception, a carried ``BaseException`` as itself; the queue lets go of the run.

        Raised as ``raise queue.run_error()``: kept in no local of the frame that raises it (whose traceback
        holds that frame), so the error, its traceback and the stream are freed without the garbage collector.
        """
        from toolweave.tools._concurrent import CarriedError

        run, self._run = self._run, None
        assert run is not None
        error = run.exception()
        assert error is not None
        return error.error if isinstance(error, CarriedError) else error

    async def stop(self) -> None:
        """Cancel the run if it still goes on (the consumer left early), waiting :data:`_CLOSE_TIMEOUT` at most.

        A run that failed after the consumer left has nobody to raise its error to: the error is marked
        retrieved here, else asyncio logged "Task exception was never retrieved" when the task was freed.
        """
        import asyncio

        run, self._run = self._run, None
        if run is None:
            return
        if not run.done():
            run.cancel()
            await asyncio.wait([run], timeout=_CLOSE_TIMEOUT)
        if run.done() and not run.cancelled():
            run.exception()  # marks it retrieved; not kept in a local (see run_error)

    def __call__(self, event: RunEvent) -> None:
        self.put(event)

    def put(self, item: RunEvent | None) -> None:
        """Queue an event (``None``: the run ended) and wake the consumer if it waits."""
        self._items.append(item)
        if item is not None:
            self._unhandled += 1
            self._live += type(item) is self._live_kind
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)

    async def get(self) -> RunEvent | None:
        """The next event (waits for one), ``None`` once the run ended."""
        while not self._items:
            import asyncio  # only when waiting: called once per event

            self._getter = asyncio.get_running_loop().create_future()
            await self._getter
        return self._items.popleft()

    def handled(self, event: RunEvent) -> None:
        """The consumer is done with ``event``; wakes :meth:`drained` when the run may go on."""
        self._unhandled -= 1
        self._live -= type(event) is self._live_kind
        drained = self._drained
        if drained is not None and not drained.done() and not self._behind():
            drained.set_result(None)

    def _behind(self) -> bool:
        return self._live > 0 or self._unhandled >= _EVENTS_AHEAD

    async def drained(self) -> None:
        """Return once the consumer has handled every live event so far and fewer than ``_EVENTS_AHEAD`` wait."""
        while self._behind():
            import asyncio  # only when waiting: awaited once per chunk

            self._drained = asyncio.get_running_loop().create_future()
            await self._drained


_EVENTS_AHEAD = 64
"""Most events a run emits before ``stream().events()``'s consumer has handled them (see ``_EventQueue``)."""


class StreamIterator(Generic[_T]):
    """One view of a stream: iterate it with ``async for`` on your event loop, or ``for`` in synchronous code.

    With ``for``, the stream runs on a private event loop in the iterating thread (as the openai SDK's
    sync streams run over their own client), one item at a time: the loop runs only while the next
    item is awaited. Leaving the loop early (``break``, an exception, ``close()``) closes the upstream
    stream, and with it the provider's connection, before the loop exits.
    """

    def __init__(self, make: Callable[[], AsyncIterator[_T]]) -> None:
        self._make = make
        self._running: AsyncIterator[_T] | None = None

    def __aiter__(self) -> StreamIterator[_T]:
        return self

    async def __anext__(self) -> _T:
        if self._running is None:
            self._running = self._make()
        return await self._running.__anext__()

    async def aclose(self) -> None:
        """Close the stream (its provider connection included) before it ended."""
        if self._running is not None:
            await _aclose(self._running)

    def __iter__(self) -> Iterator[_T]:
        """Iterate in synchronous code.

        Raises:
            RuntimeError: called from a running event loop, which it would block (there, ``async for``).
        """
        _refuse_in_running_loop('A `for` loop over a stream', 'use `async for` on the running loop')
        return _iterate_on_private_loop(self._make)


def _refuse_in_running_loop(what: str, instead: str) -> None:
    """Raise ``RuntimeError`` when called on a thread whose event loop is running (blocking there stalls it)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f'{what} blocks and cannot run inside a running event loop: {instead}')


def _iterate_on_private_loop(make: Callable[[], AsyncIterator[_T]]) -> Iterator[_T]:
    """Pull the items of ``make()`` one by one, running a private event loop in this thread for each.

    The loop runs only while ``next()`` waits for an item, so nothing of the stream runs ahead of the
    consumer (as with ``async for``), and no item crosses a thread (a hop per item cost several times a
    provider stream's own CPU, issue #14). The loop is closed at the end, with what it opened (a
    model's pooled client for this loop, async generators, the default executor).
    """
    import asyncio

    loop = asyncio.new_event_loop()
    context = contextvars.copy_context()  # every step runs in a copy of the creator's context variables
    items = make()
    failed: list[BaseException] = []
    step: asyncio.Task[tuple[bool, _T | None]] | None = None
    try:
        while True:
            # a step never raises: a tool's KeyboardInterrupt/SystemExit does not go through the loop, and the
            # error is raised from here only, popped (no local keeps it: its traceback holds this frame)
            step = loop.create_task(_next_item(items, failed), context=context.copy())
            done, item = loop.run_until_complete(step)
            if failed:
                raise failed.pop()
            if done:
                return
            yield cast(_T, item)
    finally:
        _close_private_loop(loop, items, step)


def _close_private_loop(
    loop: asyncio.AbstractEventLoop, items: AsyncIterator[Any], step: asyncio.Future[Any] | None
) -> None:
    """Stop an interrupted ``step`` (e.g. KeyboardInterrupt while waiting), close ``items``, then ``loop``."""
    import asyncio

    try:
        if step is not None and not step.done():
            step.cancel()
            loop.run_until_complete(asyncio.wait([step], timeout=_CLOSE_TIMEOUT))
        loop.run_until_complete(asyncio.wait_for(_aclose(items), _CLOSE_TIMEOUT))
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


async def _next_item(items: AsyncIterator[_T], failed: list[BaseException]) -> tuple[bool, _T | None]:
    """``(False, item)``, or ``(True, None)`` at the end or when ``items`` raised: its error appended to ``failed``.

    A cancellation (the step stopped from outside) is raised as it is.
    """
    import asyncio

    try:
        return False, await items.__anext__()
    except StopAsyncIteration:
        return True, None
    except asyncio.CancelledError:
        raise
    except BaseException as error:  # noqa: BLE001 - raised again, as itself, by _iterate_on_private_loop
        failed.append(error)
        return True, None


async def _aclose(items: AsyncIterator[Any]) -> None:
    aclose = getattr(items, 'aclose', None)
    if aclose is not None:
        await aclose()


def _check_handler(handler: object) -> EventHandler:
    """``handler`` when it is a plain (not ``async``) callable.

    Raises:
        TypeError: not callable, or an ``async def`` function (it would never be awaited).
    """
    if not callable(handler):
        raise TypeError(f'on_event must be a callable taking one event, got {handler!r}')
    if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(type(handler).__call__):
        raise TypeError(
            'on_event must be a plain function (it is called synchronously, in order); '
            'for async handling use `async for event in ....stream().events()`'
        )
    return cast('EventHandler', handler)


def _logging_errors(handler: EventHandler) -> EventHandler:
    """``handler``, with an exception it raises logged instead of ending the run."""

    def emit(event: RunEvent) -> None:
        try:
            handler(event)
        except Exception:
            logger.exception('on_event handler raised on a %s event; the run goes on', event.kind)

    return emit
