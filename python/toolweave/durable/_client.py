"""Workers that serve durable runs, and the clients (async and blocking) that start them, wait for them and stream their events."""

from __future__ import annotations

import asyncio
import atexit
import gc
import threading
import uuid
from collections.abc import AsyncGenerator, Awaitable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Replayer, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from toolweave import exceptions
from toolweave.approvals import Decision, PendingToolCall
from toolweave.chat.messages import Message, UserMessage
from toolweave.chat.options import ChatOptions
from toolweave.chat.response import ChatResponse
from toolweave.durable._activities import ToolweaveActivities, options_of
from toolweave.durable._codec import DATA_CONVERTER, from_json_value, to_json_value
from toolweave.durable._records import EventsPage, RunInput, RunOutput
from toolweave.durable._registry import DurableRegistry, serve
from toolweave.durable._workflow import WORKFLOW_NAME, ToolweaveRun
from toolweave.events import RunEvent

__all__ = [
    'DEFAULT_TASK_QUEUE',
    'BlockingDurableClient',
    'BlockingDurableRun',
    'DurableClient',
    'DurableRun',
    'DurableRunError',
    'connect',
    'create_replayer',
    'create_worker',
]

DEFAULT_TASK_QUEUE = 'toolweave'
_REPLAY_BUILD = 'toolweave-replay'
_PASSTHROUGH = ('toolweave', 'orjson', 'pydantic', 'pydantic_core', 'opentelemetry', 'httpx', 'httpcore', 'anyio')


class DurableRunError(RuntimeError):
    """A durable run failed with an error that is not a provider error (those are raised as their own class).

    Attributes:
        error_type: The class name of the error that ended the run (``ToolRetryBudgetExceededError``,
            ``LookupError``, ``UnknownNameError``, ...).
        message: Its message.
    """

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(f'{error_type}: {message}')
        self.error_type = error_type
        self.message = message


async def connect(target: str, *, namespace: str = 'default', **kwargs: Any) -> Client:
    """A Temporal client with toolweave's data converter (``target``: ``'host:port'`` of the frontend).

    The first call also makes the process collect garbage at exit (``atexit``), while the interpreter
    is still whole: a Temporal client left in a reference cycle (asyncio tasks make them) was otherwise
    freed during the interpreter's finalization, where temporalio's runtime aborted the process
    (SIGABRT, "PyGILState_Release") in about a third of short-lived scripts on this machine.
    """
    _collect_at_exit()
    return await Client.connect(target, namespace=namespace, data_converter=DATA_CONVERTER, **kwargs)


_COLLECTING = threading.Event()


def _collect_at_exit() -> None:
    if not _COLLECTING.is_set():
        _COLLECTING.set()
        atexit.register(gc.collect)


def create_worker(
    client: Client, registry: DurableRegistry, *, task_queue: str = DEFAULT_TASK_QUEUE, **worker_options: Any
) -> Worker:
    """A Temporal ``Worker`` serving durable runs on ``task_queue`` with ``registry``'s objects.

    Run it with ``await worker.run()`` or ``async with worker:``. ``worker_options`` go to ``Worker``
    (e.g. ``max_concurrent_activities``). The workflow runs in Temporal's sandbox with toolweave
    passed through (imported once, shared with the activities).
    """
    serve(task_queue, registry)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[ToolweaveRun],
        activities=ToolweaveActivities(registry).all(),
        workflow_runner=_runner(),
        **worker_options,
    )


def create_replayer(registry: DurableRegistry) -> Replayer:
    """A Temporal ``Replayer`` of toolweave's workflow, looking names up in ``registry`` (as a worker has it).

    ``await create_replayer(registry).replay_workflow(history)`` raises ``NondeterminismError`` when the
    code or the registered loop would not make the recorded decisions again (check before deploying).
    """
    serve(f'replay-{_REPLAY_BUILD}', registry)  # the task queue the replayer's workflows see
    return Replayer(
        workflows=[ToolweaveRun], data_converter=DATA_CONVERTER, workflow_runner=_runner(), build_id=_REPLAY_BUILD
    )


def _runner() -> SandboxedWorkflowRunner:
    """Temporal's sandbox, with toolweave (and what it imports) passed through: imported once per process."""
    return SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default.with_passthrough_modules(*_PASSTHROUGH))


class DurableRun:
    """A started durable run: its id, its result, its events, and its pending calls and decisions when paused."""

    def __init__(self, handle: WorkflowHandle[Any, Any]) -> None:
        self.handle = handle

    @property
    def id(self) -> str:
        """The run's workflow id (attach from any process with :meth:`DurableClient.get`)."""
        return self.handle.id

    async def result(self) -> ChatResponse:
        """Wait for the final ``ChatResponse`` (usage summed over rounds, as in-process).

        Raises:
            ProviderError: the model failed (its subclass: ``AuthenticationError``, ``ContextLengthError``, ...).
            DurableRunError: the run ended with another error (unknown tool, retry budget, ...).
        """
        try:
            output = await self.handle.result()
        except WorkflowFailureError as failure:
            raise run_error(failure) from None
        response = from_json_value(output.response if isinstance(output, RunOutput) else output['response'])
        if not isinstance(response, ChatResponse):
            raise DurableRunError('ValueError', 'the run ended without a ChatResponse')
        return response

    async def pending(self) -> tuple[PendingToolCall, ...]:
        """The calls the run waits for while paused (approval, deferred results); ``()`` otherwise."""
        calls = await self.handle.query('pending', result_type=list)
        return tuple(from_json_value(call) for call in calls)

    async def decide(self, decisions: Mapping[str, Decision]) -> None:
        """Resume the paused run with one decision per pending call (from any process); returns once accepted.

        Raises:
            DurableRunError: the run is not paused or has ended (``error_type`` ``RunNotPausedError``), or the decisions
                do not fit its pending calls (``MissingDecisionError``, ``UnknownToolCallError``,
                ``InvalidDecisionError``); nothing changes then.
        """
        try:
            await self.handle.execute_update('decide', to_json_value(dict(decisions)))
        except RPCError as error:
            if error.status in (RPCStatusCode.FAILED_PRECONDITION, RPCStatusCode.NOT_FOUND):
                raise DurableRunError('RunNotPausedError', f'the run {self.id} has ended: {error.message}') from None
            raise
        except WorkflowUpdateFailedError as failure:
            cause = failure.cause
            if isinstance(cause, ApplicationError):
                raise DurableRunError(cause.type or 'ApplicationError', cause.message) from None
            raise

    async def events(self, *, poll_interval: float = 0.1) -> AsyncGenerator[RunEvent, None]:
        """The run's events in order while it runs (from the start), ending when the run ends."""
        seen = 0
        while True:
            page = await self.handle.query('events', seen, result_type=EventsPage)
            for data in page.events:
                yield from_json_value(data)
            seen += len(page.events)
            if page.done:
                return
            await asyncio.sleep(poll_interval)


class DurableClient:
    """Starts durable runs on a task queue served by :func:`create_worker` workers.

    Args:
        client: A client made by :func:`connect` (toolweave's data converter).
        task_queue: The workers' task queue.
    """

    def __init__(self, client: Client, *, task_queue: str = DEFAULT_TASK_QUEUE) -> None:
        self.client = client
        self.task_queue = task_queue

    async def start(
        self,
        prompt: str | Sequence[Message],
        *,
        model: str,
        tools: Sequence[str] = (),
        loop: str = 'default',
        memory: str | None = None,
        conversation_id: str | None = None,
        options: ChatOptions | None = None,
        tool_context: Mapping[str, Any] | None = None,
        advisors: Sequence[str] = (),
        advisor_params: Mapping[str, Any] | None = None,
        deltas: bool = False,
        run_id: str | None = None,
    ) -> DurableRun:
        """Start a run of registered ``model`` with registered ``tools``; returns at once.

        Args:
            prompt: The user text, or the messages.
            model: A registered model name.
            tools: Registered tool names offered to the model.
            loop: A registered ``ToolCallingAdvisor`` name (``'default'``: ``ToolCallingAdvisor()``).
            memory: A registered chat memory name; the conversation is ``conversation_id``.
            conversation_id: The memory's conversation (``None``: the memory advisor's default).
            options: ``ChatOptions`` fields for every round (its tools are ignored: use ``tools``).
            tool_context: Values for tools taking a ``ToolContext`` (JSON values only).
            advisors: Registered advisor names (``DurableRegistry.add_advisor``/``add_output``) on the
                run's chain, placed by their ``order`` around the loop as in ``ChatClient``.
            advisor_params: Advisor parameters (JSON values), as ``spec.advisors(key=value)``;
                ``conversation_id`` is also the ``chat_memory_conversation_id`` parameter (tool-search sessions).
            deltas: Stream the model rounds: :meth:`DurableRun.events` then also yields ``TextDelta``,
                ``ReasoningDelta``, ``ToolCallStarted`` and ``ToolCallArgumentsDelta`` as they arrive
                (one signal per 50 ms of a round's stream; the model's ``stream`` instead of ``acall``).
            run_id: The workflow id (default: a new ``toolweave-<uuid>``); starting a second run
                with the id of a running one fails.
        """
        messages = (UserMessage(prompt),) if isinstance(prompt, str) else tuple(prompt)
        run = RunInput(
            messages=to_json_value(list(messages)),
            model=model,
            tools=list(tools),
            loop=loop,
            memory=memory,
            conversation_id=conversation_id,
            options=options_of(options),
            tool_context=to_json_value(dict(tool_context or {})),
            advisors=list(advisors),
            advisor_params=to_json_value(dict(advisor_params or {})),
            deltas=deltas,
        )
        handle = await self.client.start_workflow(
            WORKFLOW_NAME,
            run,
            id=run_id or f'toolweave-{uuid.uuid4()}',
            task_queue=self.task_queue,
            result_type=RunOutput,
        )
        return DurableRun(handle)

    async def run(self, prompt: str | Sequence[Message], **settings: Any) -> ChatResponse:
        """:meth:`start` then :meth:`DurableRun.result`."""
        return await (await self.start(prompt, **settings)).result()

    def get(self, run_id: str) -> DurableRun:
        """The run ``run_id`` (started by any process)."""
        return DurableRun(self.client.get_workflow_handle(run_id, result_type=RunOutput))


def run_error(failure: WorkflowFailureError) -> Exception:
    """The toolweave error a failed run raises: a ``ProviderError`` subclass by name, else :class:`DurableRunError`."""
    cause = failure.cause
    if not isinstance(cause, ApplicationError):
        return DurableRunError(type(cause).__name__, str(cause))
    kind = cause.type or 'ApplicationError'
    cls = getattr(exceptions, kind, None)
    if isinstance(cls, type) and issubclass(cls, exceptions.ProviderError):
        details = cause.details[0] if cause.details and isinstance(cause.details[0], dict) else {}
        return cls(cause.message, status_code=details.get('status_code'), provider=details.get('provider'))
    return DurableRunError(kind, cause.message)


_T = TypeVar('_T')


class BlockingDurableClient:
    """:class:`DurableClient` for blocking code: the same methods, each waiting for its answer.

    The Temporal client lives on an event loop of its own, in a daemon thread this object starts
    (Temporal's client is bound to one loop); every call hands its work to that loop and waits. Close
    it (``close()``, or ``with``) when done: the client is released while the interpreter still runs,
    which keeps Temporal's runtime threads from touching a finalizing interpreter (also done at exit).

    Args:
        target: ``'host:port'`` of the Temporal frontend.
        namespace: The Temporal namespace.
        task_queue: The workers' task queue.
        **connect_options: More options of ``temporalio.client.Client.connect`` (``tls``, ``api_key``, ...).
    """

    def __init__(
        self,
        target: str,
        *,
        namespace: str = 'default',
        task_queue: str = DEFAULT_TASK_QUEUE,
        **connect_options: Any,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name='toolweave-durable', daemon=True)
        self._thread.start()
        atexit.register(self.close)
        try:
            client = self._wait(connect(target, namespace=namespace, **connect_options))
        except BaseException:
            self.close()
            raise
        self.runs: DurableClient | None = DurableClient(client, task_queue=task_queue)

    def _wait(self, work: Awaitable[_T]) -> _T:
        if self._loop.is_closed():
            raise RuntimeError('the BlockingDurableClient is closed')

        async def run() -> _T:
            return await work

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result()

    def _runs(self) -> DurableClient:
        if self.runs is None:
            raise RuntimeError('the BlockingDurableClient is closed')
        return self.runs

    def start(self, prompt: str | Sequence[Message], **settings: Any) -> BlockingDurableRun:
        """:meth:`DurableClient.start` (same arguments); returns once the run is started."""
        return BlockingDurableRun(self, self._wait(self._runs().start(prompt, **settings)))

    def run(self, prompt: str | Sequence[Message], **settings: Any) -> ChatResponse:
        """:meth:`start` then :meth:`BlockingDurableRun.result`."""
        return self.start(prompt, **settings).result()

    def get(self, run_id: str) -> BlockingDurableRun:
        """The run ``run_id`` (started by any process)."""
        return BlockingDurableRun(self, self._runs().get(run_id))

    def close(self) -> None:
        """Release the Temporal client and stop the loop's thread (idempotent)."""
        atexit.unregister(self.close)
        if self._loop.is_closed():
            return
        self.runs = None

        async def settle() -> None:  # the client's last callbacks run while the interpreter is whole
            gc.collect()
            await asyncio.sleep(0)

        asyncio.run_coroutine_threadsafe(settle(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> BlockingDurableClient:  # noqa: PYI034 - Python 3.10 has no typing.Self
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class BlockingDurableRun:
    """:class:`DurableRun` for blocking code (made by :class:`BlockingDurableClient`)."""

    def __init__(self, client: BlockingDurableClient, run: DurableRun) -> None:
        self._client = client
        self.run = run

    @property
    def id(self) -> str:
        """The run's workflow id."""
        return self.run.id

    def result(self) -> ChatResponse:
        """:meth:`DurableRun.result`: wait for the final ``ChatResponse`` (same errors)."""
        return self._client._wait(self.run.result())

    def pending(self) -> tuple[PendingToolCall, ...]:
        """:meth:`DurableRun.pending`."""
        return self._client._wait(self.run.pending())

    def decide(self, decisions: Mapping[str, Decision]) -> None:
        """:meth:`DurableRun.decide` (same errors)."""
        self._client._wait(self.run.decide(decisions))

    def events(self, *, poll_interval: float = 0.1) -> Iterator[RunEvent]:
        """:meth:`DurableRun.events`: the run's events in order while it runs, from the start."""
        stream = self.run.events(poll_interval=poll_interval)
        try:
            while True:
                try:
                    yield self._client._wait(stream.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            self._client._wait(stream.aclose())
