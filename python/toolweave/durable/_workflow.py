"""The durable run: toolweave's tool loop (:class:`~toolweave.advisors._rounds.RoundEngine`) driven by a Temporal workflow.

The workflow is a fourth driver of the one loop engine, next to the blocking, async and streaming
ones of ``ToolCallingAdvisor``: every rule (hooks, eligibility, ``max_rounds``, repetition and
``length`` guards, ``return_direct``, limit breaches, usage summed over rounds, events) is the
engine's, and the round's tools are executed by the registered loop's own ``ToolCallingManager``
(limits, retry budget for invalid arguments, unknown-tool behaviour, exception processor, order and
concurrency). Only the I/O changes: a model round is the ``toolweave.model_call`` activity and the
manager's tools are proxies whose ``acall`` is the ``toolweave.tool_call`` activity, so a worker that
dies mid-run loses nothing: Temporal replays the recorded results and runs only what had not finished.

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
from dataclasses import replace
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TemporalError, TimeoutError, TimeoutType

from toolweave.advisors._rounds import ExecuteTools, Finish, Pause, RoundEngine, _tool_result, _ToolEvents
from toolweave.advisors.api import ChatClientRequest, ChatClientResponse
from toolweave.approvals import APPROVED_TOOL_CALLS_KEY, ApprovalRequired, Decision, tool_call_approved
from toolweave.chat.messages import ToolCall, ToolResponse
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse
from toolweave.durable._activities import MEMORY_AFTER, MEMORY_BEFORE, MODEL_CALL, TOOL_CALL, option_fields, options_of
from toolweave.durable._codec import from_json_value, to_json_value
from toolweave.durable._records import (
    EventsPage,
    MemoryCall,
    ModelAnswer,
    ModelCall,
    RunInput,
    RunOutput,
    ToolInvocation,
    ToolOutcome,
)
from toolweave.durable._registry import DurableRegistry, registry_for
from toolweave.events import (
    ON_EVENT_CONTEXT_KEY,
    ApprovalRequested,
    RunEvent,
    ToolExecutionStarted,
    listening_to_tools,
)
from toolweave.exceptions import (
    InvalidToolArgumentsError,
    ToolArgumentsError,
    ToolCallLimitExceededError,
    ToolExecutionError,
)
from toolweave.runstate.state import RESUME_CONTEXT_KEY, Resumption, RunState, RunStateError
from toolweave.tools.context import ToolContext, current_tool_call
from toolweave.tools.definition import ToolDefinition, ToolMetadata
from toolweave.tools.manager import DefaultToolCallingManager, ToolCallingManager

__all__ = ['WORKFLOW_NAME', 'RemoteToolError', 'ToolweaveRun']

WORKFLOW_NAME = 'toolweave.run'
_MEMORY_TIMEOUT = timedelta(seconds=60)


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
        advisor = registry.loop(run.loop)
        messages = tuple(from_json_value(run.messages))
        if run.memory is not None:
            messages = await self._memory_before(run, messages)
        tools = tuple(_ActivityTool(registry, name, run.loop, self._durations) for name in run.tools)
        fields = option_fields(run.options)
        options = ToolCallingChatOptions(tool_callbacks=tools, tool_context=from_json_value(run.tool_context), **fields)
        request = ChatClientRequest(Prompt(messages, options), {ON_EVENT_CONTEXT_KEY: self._emit})
        engine = RoundEngine(advisor, request, None)
        manager = _workflow_manager(advisor.tool_calling_manager)
        step: ExecuteTools | Finish | None = engine.start()
        while True:
            if isinstance(step, Pause):
                resumption = await self._decided(step.state)
                engine = RoundEngine(advisor, _resuming(request, resumption), None)
                step = engine.start()
            elif isinstance(step, Finish):
                break
            elif isinstance(step, ExecuteTools):
                step = await self._execute(engine, manager, step)
            else:
                round_request = engine.next_request()
                chat = await self._model_call(run.model, round_request)
                step = engine.on_response(ChatClientResponse(chat, round_request.context))
        final = step.response.chat_response
        if run.memory is not None:
            call = MemoryCall(memory=run.memory, conversation_id=run.conversation_id, response=to_json_value(final))
            await workflow.execute_activity(MEMORY_AFTER, call, start_to_close_timeout=_MEMORY_TIMEOUT)
        return RunOutput(response=to_json_value(final))

    def _emit(self, event: RunEvent) -> None:
        if isinstance(event, ApprovalRequested):  # the engine's random run id: the workflow id instead
            event = replace(event, state=replace(event.state, run_id=workflow.info().workflow_id))
        self._events.append(to_json_value(event))

    async def _decided(self, state: RunState) -> Resumption:
        """Wait (no worker held) for the ``decide`` update; the paused run with its decisions."""
        self._paused, self._decisions = replace(state, run_id=workflow.info().workflow_id), None
        await workflow.wait_condition(lambda: self._decisions is not None)
        paused, decisions = self._paused, self._decisions
        assert decisions is not None
        self._paused, self._decisions = None, None
        return Resumption(paused, decisions)

    async def _model_call(self, model: str, request: ChatClientRequest) -> ChatResponse:
        entry = registry_for(workflow.info().task_queue).model(model)
        options = request.prompt.options
        names = (
            [c.tool_definition.name for c in options.tool_callbacks]
            if isinstance(options, ToolCallingChatOptions)
            else []
        )
        call = ModelCall(
            model=model, messages=to_json_value(list(request.prompt.messages)), options=options_of(options), tools=names
        )
        answer = await workflow.execute_activity(
            MODEL_CALL, call, result_type=ModelAnswer, start_to_close_timeout=entry.timeout, retry_policy=entry.retry
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
                result = await manager.aexecute_tool_calls(step.prompt, step.response)
        except ToolCallLimitExceededError as breach:
            return engine.on_limit_breach(breach)
        return engine.on_tool_results(result)

    async def _memory_before(self, run: RunInput, messages: tuple[Any, ...]) -> tuple[Any, ...]:
        assert run.memory is not None
        call = MemoryCall(
            memory=run.memory, conversation_id=run.conversation_id, messages=to_json_value(list(messages))
        )
        merged = await workflow.execute_activity(
            MEMORY_BEFORE, call, result_type=MemoryCall, start_to_close_timeout=_MEMORY_TIMEOUT
        )
        return tuple(from_json_value(merged.messages))


class _ActivityTool:
    """A registered tool as the workflow's manager sees it: same definition, ``acall`` = the tool activity.

    The tool's timeout is enforced by the activity (the manager must not also time it with a workflow
    timer), so the metadata here carries none.
    """

    def __init__(self, registry: DurableRegistry, name: str, loop: str, durations: dict[str, float]) -> None:
        callback = registry.tool(name).callback
        self.name = name
        self._definition = callback.tool_definition
        self._metadata = replace(callback.tool_metadata, timeout=None)
        self._timeout, self._bound = registry.tool_timeout(name, loop)
        self._heartbeat = timedelta(seconds=registry.heartbeat_timeout)
        self._retry = registry.tool_retry_policy(name)
        self._durations = durations

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
            return text
        raise ToolExecutionError(self._definition, _rebuilt_cause(self.name, outcome), outcome.message)


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
