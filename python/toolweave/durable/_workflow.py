"""The durable run: toolweave's tool loop (:class:`~toolweave.advisors._rounds.RoundEngine`) driven by a Temporal workflow.

The workflow is a fourth driver of the one loop engine, next to the blocking, async and streaming
ones of ``ToolCallingAdvisor``: every rule (hooks, eligibility, ``max_rounds``, repetition and
``length`` guards, ``return_direct``, limit breaches, usage summed over rounds, events) is the
engine's, and the round's tools are executed by the registered loop's own ``ToolCallingManager``
(limits, retry budget for invalid arguments, unknown-tool behaviour, exception processor, order and
concurrency). Only the I/O changes: a model round is the ``toolweave.model_call`` activity and the
manager's tools are proxies whose ``acall`` is the ``toolweave.tool_call`` activity, so a worker that
dies mid-run loses nothing: Temporal replays the recorded results and runs only what had not finished.

The run is an advisor chain, as ``ChatClient`` builds it: the registered advisors the run names, the
loop (:class:`_DurableLoop`, at the loop's order) and, last, the model round (:class:`_ModelRound`);
advisors below the loop's order wrap the whole loop, those above it every round. A
``ToolSearchToolCallingAdvisor`` loop runs on a copy whose session (:class:`_SessionMirror`) is read
and written by the ``toolweave.search_session`` activity, its search tool being a tool activity. With
``deltas``, the model activity streams the round and signals its delta events (``deltas``) before
its result.

Approvals (:mod:`toolweave.approvals`): when the engine pauses (a tool needs approval, is deferred, or
raised ``ApprovalRequired``), the workflow waits, holding no worker, until the ``decide`` update brings
one decision per pending call (checked by its validator: a wrong set is rejected and changes nothing);
the run then resumes through the engine's own resume (``RoundEngine.start`` with a ``Resumption``), on
whichever worker picks it up.

Determinism (Temporal replays this code against its recorded history): the workflow reads no clock,
randomness or network; a tool's duration in the ``ToolResult`` event is measured by its activity, and
a paused state's run id is the workflow id. The advisor hooks of a registered loop (and a tool's
``requires_approval`` predicate) run here and must be deterministic too.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from typing import Any, cast

from temporalio import workflow
from temporalio.common import RetryPolicy as TemporalRetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TemporalError, TimeoutError, TimeoutType

from toolweave.advisors._rounds import ExecuteTools, Finish, Pause, RoundEngine, _tool_result, _ToolEvents
from toolweave.advisors.api import (
    LOWEST_PRECEDENCE,
    CallAdvisor,
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
)
from toolweave.advisors.chain import DefaultAroundAdvisorChain
from toolweave.advisors.tool_calling import ToolCallingAdvisor
from toolweave.advisors.tool_search import ToolSearchToolCallingAdvisor
from toolweave.advisors.tool_search import _result_names as search_result_names
from toolweave.approvals import APPROVED_TOOL_CALLS_KEY, ApprovalRequired, Decision, tool_call_approved
from toolweave.chat.messages import ToolCall, ToolResponse
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse
from toolweave.durable._activities import (
    DELTAS_SIGNAL,
    MEMORY_AFTER,
    MEMORY_BEFORE,
    MODEL_CALL,
    SEARCH_SESSION,
    TOOL_CALL,
    option_fields,
    options_of,
)
from toolweave.durable._codec import from_json_value, to_json_value
from toolweave.durable._records import (
    EventsPage,
    MemoryCall,
    ModelAnswer,
    ModelCall,
    RunInput,
    RunOutput,
    SearchScope,
    SearchSession,
    ToolInvocation,
    ToolOutcome,
)
from toolweave.durable._registry import NON_RETRYABLE, DurableRegistry, registry_for
from toolweave.events import (
    ON_EVENT_CONTEXT_KEY,
    ApprovalRequested,
    RunEvent,
    ToolCallStarted,
    ToolExecutionStarted,
    listening_to_tools,
)
from toolweave.exceptions import (
    InvalidToolArgumentsError,
    ToolArgumentsError,
    ToolCallLimitExceededError,
    ToolExecutionError,
)
from toolweave.memory.base import CONVERSATION_ID
from toolweave.runstate.state import RESUME_CONTEXT_KEY, Resumption, RunState, RunStateError
from toolweave.search._search_tool import ToolSearchTool, search_tool_definition
from toolweave.search.base import ToolIndex, ToolIndexFactory
from toolweave.search.sessions import ToolSearchSessions
from toolweave.tools.context import ToolContext, current_tool_call
from toolweave.tools.converter import ContentResult
from toolweave.tools.definition import ToolDefinition, ToolMetadata
from toolweave.tools.manager import DefaultToolCallingManager, ToolCallingManager

__all__ = ['WORKFLOW_NAME', 'RemoteToolError', 'ToolweaveRun']

WORKFLOW_NAME = 'toolweave.run'
_MEMORY_TIMEOUT = timedelta(seconds=60)
_SEARCH_RETRY = TemporalRetryPolicy(maximum_attempts=3, non_retryable_error_types=list(NON_RETRYABLE))
"""A search call lost with its worker is run again (searching twice finds the same tools)."""


class RemoteToolError(Exception):
    """Base of the classes a tool's failure is rebuilt as in the workflow when it is not a built-in exception.

    The rebuilt class has the original class name (so ``ToolResponse.error_type`` is the in-process one).
    """


@workflow.defn(name=WORKFLOW_NAME)
class ToolweaveRun:
    """One durable run of the tool loop (see the module docstring)."""

    def __init__(self) -> None:
        self._events: list[Any] = []
        self._done = False
        self._durations: dict[str, float] = {}
        self._paused: RunState | None = None
        self._decisions: dict[str, Decision] | None = None
        self._streamed_calls: set[tuple[int, int]] = set()
        self._round = 0
        self._session: _SessionMirror | None = None
        self._search_tool: _ActivityTool | None = None

    @workflow.query(name='pending')
    def pending(self) -> list[Any]:
        """The calls the paused run waits for (tagged JSON ``PendingToolCall``s); ``[]`` when not paused."""
        return to_json_value(list(self._paused.pending)) if self._paused is not None else []

    @workflow.update(name='decide')
    async def decide(self, decisions: dict[str, Any]) -> None:
        """Resume the paused run with one decision per pending call (tagged JSON ``Approve``/``Deny``/``DeferredResult``)."""
        self._decisions = {call_id: from_json_value(decision) for call_id, decision in decisions.items()}

    @decide.validator
    def _check_decisions(self, decisions: dict[str, Any]) -> None:
        """Reject (nothing recorded) when the run is not paused or the decisions do not fit its pending calls."""
        if self._paused is None or self._decisions is not None:
            raise ApplicationError('the run is not waiting for decisions', type='RunNotPausedError')
        try:
            self._paused.check_decisions({k: from_json_value(v) for k, v in decisions.items()})
        except (RunStateError, ValueError) as error:
            raise ApplicationError(str(error), type=type(error).__name__) from None

    @workflow.query(name='events')
    def events(self, since: int) -> EventsPage:
        """The run's events from index ``since`` on (tagged JSON), and whether the run has ended."""
        return EventsPage(events=self._events[since:], done=self._done)

    @workflow.signal(name=DELTAS_SIGNAL)
    def deltas(self, events: list[Any]) -> None:
        """A streaming model round's delta events (sent by its activity before the round's result)."""
        for event in events:
            if isinstance(event, ToolCallStarted):  # the round's response will not report it again
                self._streamed_calls.add((event.round, event.index))
            self._events.append(to_json_value(event))

    @workflow.run
    async def run(self, run: RunInput) -> RunOutput:
        """Drive the engine to its ``Finish``; failures end the run with the toolweave error's type name."""
        try:
            return await self._run(run)
        except ActivityError as error:
            raise _run_failure(error) from None
        except TemporalError:
            raise
        except Exception as error:  # noqa: BLE001 - the loop's own errors: unknown tool, retry budget, a hook's bug
            raise ApplicationError(str(error), type=type(error).__name__, non_retryable=True) from None
        finally:
            self._done = True

    async def _run(self, run: RunInput) -> RunOutput:
        registry = registry_for(workflow.info().task_queue)
        loop = registry.loop(run.loop)
        advisors = tuple(advisor for name in run.advisors for advisor in registry.advisors(name))
        messages = tuple(from_json_value(run.messages))
        if run.memory is not None:
            messages = await self._memory_before(run, messages)
        tools = tuple(_registered_tool(registry, name, run.loop, self._durations) for name in run.tools)
        fields = option_fields(run.options)
        options = ToolCallingChatOptions(tool_callbacks=tools, tool_context=from_json_value(run.tool_context), **fields)
        context: dict[str, Any] = {**from_json_value(run.advisor_params), ON_EVENT_CONTEXT_KEY: self._emit}
        if run.conversation_id is not None:
            context.setdefault(CONVERSATION_ID, run.conversation_id)
        request = ChatClientRequest(Prompt(messages, options), context)
        if isinstance(loop, ToolSearchToolCallingAdvisor):
            loop = await self._searching(registry, run, loop, request)
        chain = DefaultAroundAdvisorChain(
            [*advisors, _DurableLoop(self, loop), _ModelRound(self, run.model, run.deltas)]
        )
        final = (await chain.anext_call(request)).chat_response
        if run.memory is not None and final is not None:
            call = MemoryCall(memory=run.memory, conversation_id=run.conversation_id, response=to_json_value(final))
            await workflow.execute_activity(MEMORY_AFTER, call, start_to_close_timeout=_MEMORY_TIMEOUT)
        return RunOutput(response=to_json_value(final) if final is not None else None)

    async def _loop(
        self, advisor: ToolCallingAdvisor, loop: _DurableLoop, request: ChatClientRequest, chain: CallAdvisorChain
    ) -> ChatClientResponse:
        """The tool loop, as ``ToolCallingAdvisor.aadvise_call`` with the pause waiting for the ``decide`` update."""
        below = chain.copy(loop)
        engine = RoundEngine(advisor, request, chain)
        manager = _workflow_manager(advisor.tool_calling_manager)
        step: ExecuteTools | Finish | None = engine.start()
        while True:
            if isinstance(step, Pause):
                resumption = await self._decided(step.state)
                engine = RoundEngine(advisor, _resuming(request, resumption), chain)
                step = engine.start()
            elif isinstance(step, Finish):
                return step.response
            elif isinstance(step, ExecuteTools):
                step = await self._execute(engine, manager, step)
                await self._flush_session()
            else:
                round_request = engine.next_request()
                await self._flush_session()
                self._round = engine.rounds
                step = engine.on_response(await below.anext_call(round_request))
                await self._flush_session()

    async def _searching(
        self, registry: DurableRegistry, run: RunInput, loop: ToolSearchToolCallingAdvisor, request: ChatClientRequest
    ) -> ToolCallingAdvisor:
        """The tool-search loop of this run: its session read (and indexed) by an activity, kept in the workflow."""
        scope = SearchScope(loop=run.loop, session_id=loop.session_id(request), tools=list(run.tools))
        self._session = _SessionMirror(scope)
        self._session.known(await self._session_activity(SearchSession(scope=scope, index=True)))
        definition = search_tool_definition(loop.search_tool_name, loop.max_results)
        timeout, bound = registry.default_tool_timeout(run.loop)
        self._search_tool = _ActivityTool(
            definition,
            ToolMetadata(),
            timeout,
            bound,
            registry,
            _SEARCH_RETRY,
            self._durations,
            scope,
        )
        self._search_tool.found = self._session.known
        copied: ToolCallingAdvisor = loop.copy(sessions=self._session)
        return copied

    async def _flush_session(self) -> None:
        """Write the names the run's session gained in the workflow to its store (one activity); learn the others'."""
        session = self._session
        if session is not None and session.pending:
            added, session.pending = session.pending, []
            session.known(await self._session_activity(SearchSession(scope=session.scope, add=added)))

    async def _session_activity(self, session: SearchSession) -> list[str]:
        names: list[str] = await workflow.execute_activity(
            SEARCH_SESSION, session, result_type=list, start_to_close_timeout=_MEMORY_TIMEOUT
        )
        return names

    def _emit(self, event: RunEvent) -> None:
        if isinstance(event, ApprovalRequested):  # the engine's random run id: the workflow id instead
            event = replace(event, state=replace(event.state, run_id=workflow.info().workflow_id))
        if isinstance(event, ToolCallStarted) and (event.round, event.index) in self._streamed_calls:
            return  # the streamed round reported it as it arrived
        self._events.append(to_json_value(event))

    async def _decided(self, state: RunState) -> Resumption:
        """Wait (no worker held) for the ``decide`` update; the paused run with its decisions."""
        self._paused, self._decisions = replace(state, run_id=workflow.info().workflow_id), None
        await workflow.wait_condition(lambda: self._decisions is not None)
        paused, decisions = self._paused, self._decisions
        assert decisions is not None
        self._paused, self._decisions = None, None
        return Resumption(paused, decisions)

    async def _model_call(self, model: str, request: ChatClientRequest, deltas: bool) -> ChatResponse:
        registry = registry_for(workflow.info().task_queue)
        entry = registry.model(model)
        options = request.prompt.options
        callbacks = options.tool_callbacks if isinstance(options, ToolCallingChatOptions) else ()
        registered = [c.name for c in callbacks if isinstance(c, _ActivityTool) and c.search is None]
        others = [_definition_json(c.tool_definition) for c in callbacks if c.tool_definition.name not in registered]
        call = ModelCall(
            model=model,
            messages=to_json_value(list(request.prompt.messages)),
            options=options_of(options),
            tools=registered,
            definitions=others,
            round=self._round,
            deltas=deltas,
        )
        answer = await workflow.execute_activity(  # heartbeats: a worker lost mid-call is noticed in seconds
            MODEL_CALL,
            call,
            result_type=ModelAnswer,
            start_to_close_timeout=entry.timeout,
            heartbeat_timeout=timedelta(seconds=registry.heartbeat_timeout),
            retry_policy=entry.retry,
        )
        response = from_json_value(answer.response)
        if not isinstance(response, ChatResponse):
            raise TypeError(f'the model activity returned {type(response).__name__}, not a ChatResponse')
        return response

    async def _execute(
        self, engine: RoundEngine, manager: ToolCallingManager, step: ExecuteTools
    ) -> ExecuteTools | Finish | None:
        """The round's tools through the loop's manager (each call an activity); the engine's next step."""
        listener = _DurableToolEvents(engine.rounds, self._emit, self._durations)
        engine._listener = listener  # the engine then reports no call twice (as with its own listener)
        try:
            with listening_to_tools(listener):
                result = await manager.aexecute_tool_calls(self._durable_prompt(step.prompt), step.response)
        except ToolCallLimitExceededError as breach:
            return engine.on_limit_breach(breach)
        return engine.on_tool_results(result)

    def _durable_prompt(self, prompt: Prompt) -> Prompt:
        """``prompt`` with the tool-search tool as its activity (it searches the worker's index)."""
        options = prompt.options
        if self._search_tool is None or not isinstance(options, ToolCallingChatOptions):
            return prompt
        search = self._search_tool
        callbacks = tuple(search if isinstance(c, ToolSearchTool) else c for c in options.tool_callbacks)
        return Prompt(prompt.messages, replace(options, tool_callbacks=callbacks))

    async def _memory_before(self, run: RunInput, messages: tuple[Any, ...]) -> tuple[Any, ...]:
        assert run.memory is not None
        call = MemoryCall(
            memory=run.memory, conversation_id=run.conversation_id, messages=to_json_value(list(messages))
        )
        merged = await workflow.execute_activity(
            MEMORY_BEFORE, call, result_type=MemoryCall, start_to_close_timeout=_MEMORY_TIMEOUT
        )
        return tuple(from_json_value(merged.messages))


class _DurableLoop(CallAdvisor):
    """The registered tool loop on the run's chain (its order): rounds driven by the workflow."""

    advisor_params = frozenset({CONVERSATION_ID})

    def __init__(self, run: ToolweaveRun, advisor: ToolCallingAdvisor) -> None:
        self._run = run
        self.advisor = advisor

    @property
    def name(self) -> str:
        """The loop's name."""
        return self.advisor.name

    @property
    def order(self) -> int:
        """The loop's order."""
        return self.advisor.order

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Not available: a workflow is async."""
        raise TypeError('a durable run is async')

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """The loop's rounds (see :meth:`ToolweaveRun._loop`)."""
        return await self._run._loop(self.advisor, self, request, chain)


class _ModelRound(CallAdvisor):
    """The chain's end: one model round as the ``toolweave.model_call`` activity."""

    def __init__(self, run: ToolweaveRun, model: str, deltas: bool) -> None:
        self._run = run
        self._model = model
        self._deltas = deltas

    @property
    def order(self) -> int:
        """Last, as ``ChatModelCallAdvisor``."""
        return LOWEST_PRECEDENCE

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Not available: a workflow is async."""
        raise TypeError('a durable run is async')

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """The round's response from the model activity."""
        return ChatClientResponse(await self._run._model_call(self._model, request, self._deltas), request.context)


class _SessionMirror(ToolSearchSessions):
    """A run's tool-search session in the workflow: read by an activity at the start, written back by activities.

    The loop's hooks read and add names here (no I/O in the workflow); names they add wait in
    ``pending`` until the workflow writes them to the worker's sessions (``toolweave.search_session``).
    """

    def __init__(self, scope: SearchScope) -> None:
        super().__init__(1)
        self.scope = scope
        self.pending: list[str] = []
        self._names: dict[str, None] = {}

    def known(self, names: Iterable[str]) -> None:
        """Names the store holds already."""
        for name in names:
            self._names.setdefault(name, None)

    def discovered(self, session_id: str) -> tuple[str, ...]:
        """The session's names, in discovery order."""
        return tuple(self._names)

    def add(self, session_id: str, names: Iterable[str]) -> None:
        """Names discovered in the workflow (exact-name calls, earlier results): written by the next activity."""
        for name in names:
            if name not in self._names:
                self._names[name] = None
                self.pending.append(name)

    @contextmanager
    def using_index(
        self, session_id: str, definitions: Sequence[ToolDefinition], factory: ToolIndexFactory
    ) -> Iterator[ToolIndex]:
        """No index here (the block gets none): the session activity fills the worker's, the search activity searches it."""
        yield cast(ToolIndex, None)

    def clear(self, session_id: str | None = None) -> None:
        """Forget the run's names (the store keeps its own)."""
        self._names.clear()


class _ActivityTool:
    """A tool as the workflow's manager sees it: same definition, ``acall`` = the tool activity.

    The tool's timeout is enforced by the activity (the manager must not also time it with a workflow
    timer), so the metadata here carries none. ``search``: the tool-search tool of that scope, whose
    finds go to ``found``.
    """

    def __init__(
        self,
        definition: ToolDefinition,
        metadata: ToolMetadata,
        timeout: float | None,
        bound: timedelta,
        registry: DurableRegistry,
        retry: TemporalRetryPolicy,
        durations: dict[str, float],
        search: SearchScope | None = None,
    ) -> None:
        self.name = definition.name
        self._definition = definition
        self._metadata = replace(metadata, timeout=None)
        self._timeout, self._bound = timeout, bound
        self._heartbeat = timedelta(seconds=registry.heartbeat_timeout)
        self._retry = retry
        self._durations = durations
        self.search = search
        self.found: Callable[[list[str]], None] | None = None

    @property
    def tool_definition(self) -> ToolDefinition:
        """The registered tool's definition."""
        return self._definition

    @property
    def tool_metadata(self) -> ToolMetadata:
        """The registered tool's metadata, without its timeout (the activity applies it)."""
        return self._metadata

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Not available: a durable tool runs through :meth:`acall` (the workflow is async)."""
        raise TypeError('a durable tool is called with acall, from the workflow')

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Run the call as the ``toolweave.tool_call`` activity; a failure raises ``ToolExecutionError`` as in-process."""
        call = current_tool_call()
        call_id = call.id if call is not None else ''
        context = {k: to_json_value(v) for k, v in (tool_context or {}).items() if k != APPROVED_TOOL_CALLS_KEY}
        invocation = ToolInvocation(
            tool=self.name,
            call_id=call_id,
            arguments=tool_input,
            context=context,
            timeout=self._timeout,
            approved=tool_call_approved(),
            search=self.search,
        )
        try:
            outcome = await workflow.execute_activity(
                TOOL_CALL,
                invocation,
                result_type=ToolOutcome,
                start_to_close_timeout=self._bound,
                heartbeat_timeout=self._heartbeat,
                retry_policy=self._retry,
            )
        except ActivityError as error:
            if isinstance(error.cause, TimeoutError):  # timed out or lost on every attempt: the model hears it
                lost = lost_call_error(self._definition, error.cause.type, self._bound, self._retry.maximum_attempts)
                raise lost from lost.cause
            raise
        self._durations[call_id] = outcome.duration
        if outcome.text is not None:
            text: str = outcome.text
            if self.found is not None:
                self.found(search_result_names(text))
            if outcome.media:  # a tool's images or files: the model sees them as in-process
                return ContentResult(text, [from_json_value(part) for part in outcome.media])
            return text
        raise ToolExecutionError(self._definition, _rebuilt_cause(self.name, outcome), outcome.message)


def _registered_tool(registry: DurableRegistry, name: str, loop: str, durations: dict[str, float]) -> _ActivityTool:
    """The registered tool ``name`` as an activity tool (its timeout from the tool or the loop's manager)."""
    callback = registry.tool(name).callback
    timeout, bound = registry.tool_timeout(name, loop)
    return _ActivityTool(
        callback.tool_definition,
        callback.tool_metadata,
        timeout,
        bound,
        registry,
        registry.tool_retry_policy(name),
        durations,
    )


def _definition_json(definition: ToolDefinition) -> dict[str, Any]:
    """A definition as the model activity rebuilds it."""
    return {
        'name': definition.name,
        'description': definition.description,
        'input_schema': to_json_value(definition.input_schema),
    }


def lost_call_error(
    definition: ToolDefinition, kind: TimeoutType | None, bound: timedelta, attempts: int
) -> ToolExecutionError:
    """The error (cause ``TimeoutError``) a call becomes when every attempt timed out or lost its worker.

    Its text is what the model reads: the activity's time bound was passed, or (no heartbeat) the
    worker running the call was lost, ``attempts`` times.
    """
    if kind is TimeoutType.HEARTBEAT:
        message = f"Tool '{definition.name}' did not finish: the worker running it was lost ({attempts} attempt(s))."
    else:
        message = (
            f"Tool '{definition.name}' did not finish within {bound.total_seconds():g} seconds ({attempts} attempt(s))."
        )
    return ToolExecutionError(definition, builtins.TimeoutError(message), message)


class _DurableToolEvents(_ToolEvents):
    """The engine's tool listener, with each call's duration as its activity measured it (no clock here)."""

    def __init__(self, round_no: int, emit: Any, durations: dict[str, float]) -> None:
        super().__init__(round_no, emit, None)
        self.durations = durations

    def started(self, call: ToolCall) -> None:
        self._post(ToolExecutionStarted(self.round, call))

    def finished(self, call: ToolCall, response: ToolResponse) -> None:
        self.reported.add(call.id)
        self._post(_tool_result(self.round, response, self.durations.pop(call.id, 0.0)))


_REMOTE_CLASSES: dict[str, type[RemoteToolError]] = {}


def _rebuilt_cause(tool: str, outcome: ToolOutcome) -> Exception:
    """The tool's failure as an exception of its class name (toolweave's and built-in classes are themselves)."""
    kind = outcome.error_type or 'Exception'
    if kind == ApprovalRequired.__name__:  # the manager then holds the call for a decision
        return ApprovalRequired(outcome.message)
    if kind == InvalidToolArgumentsError.__name__ and outcome.problems:
        return InvalidToolArgumentsError(tool, outcome.problems)
    if kind == ToolArgumentsError.__name__:
        return ToolArgumentsError(outcome.message)
    builtin = getattr(builtins, kind, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        try:
            return builtin(outcome.message)
        except TypeError:  # a built-in with another constructor (UnicodeDecodeError, ...)
            pass
    cls = _REMOTE_CLASSES.get(kind)
    if cls is None:
        cls = _REMOTE_CLASSES[kind] = type(kind, (RemoteToolError,), {})
    return cls(outcome.message)


def _run_failure(error: ActivityError) -> ApplicationError:
    """A failed activity as the run's failure, typed by the toolweave error (``ProviderTimeoutError`` on timeout)."""
    cause = error.cause
    if isinstance(cause, ApplicationError):
        return ApplicationError(cause.message, *cause.details, type=cause.type, non_retryable=True)
    if isinstance(cause, TimeoutError):
        return ApplicationError(
            f'activity {error.activity_type} timed out', type='ProviderTimeoutError', non_retryable=True
        )
    return ApplicationError(str(error), type='ActivityError', non_retryable=True)


def _resuming(request: ChatClientRequest, resumption: Resumption) -> ChatClientRequest:
    """The run's request, resuming: the engine takes the prompt and the progress from the state."""
    return ChatClientRequest(request.prompt, {**request.context, RESUME_CONTEXT_KEY: resumption})


def _workflow_manager(manager: ToolCallingManager) -> ToolCallingManager:
    """The loop's manager for the workflow: the same settings, without a default timeout (the activity applies it)."""
    if isinstance(manager, DefaultToolCallingManager) and manager.default_timeout is not None:
        manager = copy.copy(manager)
        manager.default_timeout = None
    return manager
