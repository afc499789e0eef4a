"""What a worker can run, by name: models, tools, tool loops (``ToolCallingAdvisor``), advisors and chat memories.

A durable run names what it uses; the workflow and the activities look the names up here, in the
worker's process (nothing is pickled into the history). The activity settings come from the objects
themselves, as the in-process loop uses them:

- a tool call's ``start_to_close`` timeout is the tool's ``timeout`` (or the loop manager's
  ``default_timeout``) plus :attr:`DurableRegistry.timeout_grace`; the tool's own timeout is enforced
  inside the activity exactly as in-process (the model gets the same error text);
- a model call's timeout is the model's ``Timeouts.total``, else the sum of its phase timeouts; its
  retries follow the model's ``RetryPolicy`` (attempts, first delay, multiplier, cap);
- errors that no retry can fix are non-retryable (:data:`NON_RETRYABLE`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.common import RetryPolicy as TemporalRetryPolicy

from toolweave.advisors.api import (
    HIGHEST_PRECEDENCE,
    Advisor,
    CallAdvisor,
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
)
from toolweave.advisors.structured_output import StructuredOutputAdvisor
from toolweave.advisors.tool_calling import ToolCallingAdvisor
from toolweave.chat.model import ChatModel
from toolweave.memory.base import ChatMemory
from toolweave.providers import RetryPolicy, Timeouts
from toolweave.structured import OutputType, Strategy, prepare
from toolweave.tools.callback import ToolCallback
from toolweave.tools.manager import DefaultToolCallingManager
from toolweave.tools.provider import to_tool_callbacks

__all__ = [
    'DEFAULT_MAX_TOOL_RESULT_BYTES',
    'NON_RETRYABLE',
    'AdvisorFactory',
    'DurableRegistry',
    'ToolRetry',
    'UnknownNameError',
]

DEFAULT_MAX_TOOL_RESULT_BYTES = 512 * 1024
"""Largest tool result a durable run carries: its text (UTF-8 bytes) plus its content parts (an image's base64, a
URL part's URL); Temporal warns above 512 KiB per payload and rejects payloads above 2 MiB. A larger result reaches
the model as an error text (``ToolResultTooLargeError``). Content parts within it reach the model as in-process."""

NON_RETRYABLE = (
    'AuthenticationError',
    'ContextLengthError',
    'BadRequestError',
    'InvalidToolArgumentsError',
    'ToolArgumentsError',
    'ToolRetryBudgetExceededError',
    'UnknownNameError',
)
"""Error types an activity fails with at once, without retry: invalid arguments, authentication, context length."""

_DEFAULT_MODEL_SECONDS = 600.0

AdvisorFactory = Callable[[], 'Advisor | Sequence[Advisor]']
"""Makes the advisor(s) of one run (called in the workflow, once per run: it must be deterministic)."""


class UnknownNameError(LookupError):
    """A run names a model, tool, loop or memory the worker did not register."""


@dataclass(frozen=True)
class ToolRetry:
    """How Temporal retries one tool's calls.

    Attributes:
        attempts: Tries of a call whose worker died or stopped heartbeating (the call is then run by
            another worker); 1 = never run a call twice.
        retry_errors: Also retry when the tool raises (default ``False``: the error text goes to the
            model on the first failure, exactly as in-process). Invalid arguments are never retried.
        initial_interval: Seconds before the first retry.
        backoff: Growth of the wait per retry.
    """

    attempts: int = 3
    retry_errors: bool = False
    initial_interval: float = 1.0
    backoff: float = 2.0

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or self.attempts < 1:
            raise ValueError(f'ToolRetry.attempts must be an int >= 1, got {self.attempts!r}')


@dataclass(frozen=True)
class ModelEntry:
    """A registered model and the activity settings derived from its ``Timeouts`` and ``RetryPolicy``."""

    model: ChatModel
    timeout: timedelta
    retry: TemporalRetryPolicy


@dataclass(frozen=True)
class ToolEntry:
    """A registered tool and its retry settings."""

    callback: ToolCallback
    retry: ToolRetry


class DurableRegistry:
    """The models, tools, loops and memories one worker serves, by name.

    Args:
        max_tool_result_bytes: Largest tool result carried (see :data:`DEFAULT_MAX_TOOL_RESULT_BYTES`).
        heartbeat_timeout: Seconds without a heartbeat after which a running tool or model call counts as lost
            (its worker died) and is retried elsewhere (a model call by its retry policy); the activity
            heartbeats every third of it. Without it a model call lost with its worker waited its whole
            ``Timeouts`` bound (600 s by default) before another worker took it.
        timeout_grace: Seconds added to a tool's own timeout for the activity's ``start_to_close``.
        max_tool_seconds: ``start_to_close`` of a tool call whose tool sets no timeout.

    Raises:
        ValueError: a number is not positive.
    """

    def __init__(
        self,
        *,
        max_tool_result_bytes: int = DEFAULT_MAX_TOOL_RESULT_BYTES,
        heartbeat_timeout: float = 10.0,
        timeout_grace: float = 5.0,
        max_tool_seconds: float = 3600.0,
    ) -> None:
        for name, value in (
            ('max_tool_result_bytes', max_tool_result_bytes),
            ('heartbeat_timeout', heartbeat_timeout),
            ('timeout_grace', timeout_grace),
            ('max_tool_seconds', max_tool_seconds),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f'{name} must be a positive number, got {value!r}')
        self.max_tool_result_bytes = max_tool_result_bytes
        self.heartbeat_timeout = heartbeat_timeout
        self.timeout_grace = timeout_grace
        self.max_tool_seconds = max_tool_seconds
        self._models: dict[str, ModelEntry] = {}
        self._tools: dict[str, ToolEntry] = {}
        self._loops: dict[str, ToolCallingAdvisor] = {'default': ToolCallingAdvisor()}
        self._memories: dict[str, ChatMemory] = {}
        self._advisors: dict[str, AdvisorFactory] = {}

    # -- registration ------------------------------------------------------------------------

    def add_model(
        self, name: str, model: ChatModel, *, timeouts: Timeouts | None = None, retry: RetryPolicy | None = None
    ) -> DurableRegistry:
        """Register ``model`` as ``name``; ``timeouts``/``retry`` default to the model transport's own."""
        transport = getattr(model, 'transport', None)
        timeouts = timeouts or getattr(transport, 'timeouts', None)
        retry = retry or getattr(transport, 'retry', None) or RetryPolicy()
        self._models[_name(name)] = ModelEntry(model, _model_timeout(timeouts), model_retry_policy(retry))
        return self

    def add_tools(self, *tools: object, retry: ToolRetry | None = None) -> DurableRegistry:
        """Register tools (anything ``ChatClient.tools`` takes) under their tool names."""
        for callback in to_tool_callbacks(*tools):
            self._tools[callback.tool_definition.name] = ToolEntry(callback, retry or ToolRetry())
        return self

    def add_loop(self, name: str, advisor: ToolCallingAdvisor) -> DurableRegistry:
        """Register a configured ``ToolCallingAdvisor`` (guards, manager limits, hooks) as ``name``.

        Its hooks run in the workflow: they must be deterministic (no clock, randomness or I/O).
        """
        if not isinstance(advisor, ToolCallingAdvisor):
            raise TypeError(f'a loop must be a ToolCallingAdvisor, not {type(advisor).__name__}')
        self._loops[_name(name)] = advisor
        return self

    def add_advisor(self, name: str, advisor: Advisor | AdvisorFactory) -> DurableRegistry:
        """Register an advisor as ``name``: one instance shared by every run, or a factory of each run's own.

        A run naming it (``DurableClient.start(advisors=[name])``) has it on its chain with the tool loop,
        by ``order`` as in ``ChatClient``: below the loop's order it wraps the whole loop, above it runs
        around every model round. Its code runs in the workflow: it must be deterministic (no clock,
        randomness or I/O) and async-capable (``BaseAdvisor`` or its own ``aadvise_call``; the default
        ``CallAdvisor.aadvise_call`` runs in a thread, which a workflow cannot). A factory returns an
        advisor or a sequence of them; use one for advisors that keep a run's state
        (``StructuredOutputAdvisor``).

        Raises:
            TypeError: ``advisor`` is neither an ``Advisor`` nor callable (a factory's result is checked per run).
        """
        if isinstance(advisor, Advisor):
            _check_advisor(advisor)
            shared = advisor
            self._advisors[_name(name)] = lambda: shared
        elif callable(advisor):
            self._advisors[_name(name)] = advisor
        else:
            raise TypeError(f'an advisor must be an Advisor or a factory of them, not {type(advisor).__name__}')
        return self

    def add_output(
        self, name: str, output_type: Any, *, strategy: Strategy = 'prompted', max_retries: int = 2
    ) -> DurableRegistry:
        """Register structured output as the advisor ``name``: as ``spec.entity(output_type, strategy=...)`` in-process.

        The run's prompt asks for ``output_type`` the strategy's way (``'prompted'``: format instructions;
        ``'native'``: the model's schema option; ``'tool'``: the ``final_result`` output tool), and a
        ``StructuredOutputAdvisor`` validates the answer and asks again with the errors up to
        ``max_retries`` times; the run's text is then the validated JSON
        (``OutputType.of(output_type).validate(response.text)``); too many invalid answers end the run
        with a ``DurableRunError`` (``StructuredOutputValidationError``).
        """
        output: OutputType[Any] = OutputType.of(output_type)
        StructuredOutputAdvisor(output, strategy, max_retries)  # checks the settings now

        def advisors() -> tuple[Advisor, ...]:
            return _Prepare(output, strategy), StructuredOutputAdvisor(output, strategy, max_retries)

        return self.add_advisor(name, advisors)

    def add_memory(self, name: str, memory: ChatMemory) -> DurableRegistry:
        """Register a chat memory (e.g. ``MessageWindowChatMemory(RedisChatMemoryRepository(...))``) as ``name``."""
        self._memories[_name(name)] = memory
        return self

    # -- lookups -------------------------------------------------------------------------------

    def model(self, name: str) -> ModelEntry:
        """The model entry ``name`` (``UnknownNameError`` when not registered)."""
        return _get(self._models, name, 'model')

    def tool(self, name: str) -> ToolEntry:
        """The tool entry ``name`` (``UnknownNameError`` when not registered)."""
        return _get(self._tools, name, 'tool')

    def loop(self, name: str) -> ToolCallingAdvisor:
        """The loop advisor ``name`` (``'default'``: a plain ``ToolCallingAdvisor()``)."""
        return _get(self._loops, name, 'loop')

    def memory(self, name: str) -> ChatMemory:
        """The chat memory ``name``."""
        return _get(self._memories, name, 'memory')

    def advisors(self, name: str) -> tuple[Advisor, ...]:
        """The advisor(s) ``name`` for one run (a factory's new ones).

        Raises:
            UnknownNameError: not registered. TypeError: the factory gave something that is not a usable advisor.
        """
        made = _get(self._advisors, name, 'advisor')()
        advisors = (made,) if isinstance(made, Advisor) else tuple(made)
        for advisor in advisors:
            _check_advisor(advisor)
        return advisors

    def tool_timeout(self, name: str, loop: str) -> tuple[float | None, timedelta]:
        """The tool's own timeout (``None``: none) and its activity's ``start_to_close``."""
        timeout = getattr(self.tool(name).callback.tool_metadata, 'timeout', None)
        return self._bounded(timeout, loop)

    def default_tool_timeout(self, loop: str) -> tuple[float | None, timedelta]:
        """The timeout of a tool without its own (the loop manager's ``default_timeout``) and its ``start_to_close``."""
        return self._bounded(None, loop)

    def _bounded(self, timeout: float | None, loop: str) -> tuple[float | None, timedelta]:
        manager = self.loop(loop).tool_calling_manager
        if timeout is None and isinstance(manager, DefaultToolCallingManager):
            timeout = manager.default_timeout
        bound = timeout + self.timeout_grace if timeout is not None else self.max_tool_seconds
        return timeout, timedelta(seconds=bound)

    def tool_retry_policy(self, name: str) -> TemporalRetryPolicy:
        """Temporal's retry policy of the tool ``name`` (see :class:`ToolRetry`)."""
        retry = self.tool(name).retry
        return TemporalRetryPolicy(
            initial_interval=timedelta(seconds=retry.initial_interval),
            backoff_coefficient=retry.backoff,
            maximum_attempts=retry.attempts,
            non_retryable_error_types=list(NON_RETRYABLE),
        )


def model_retry_policy(retry: RetryPolicy) -> TemporalRetryPolicy:
    """Temporal's retry policy from a provider ``RetryPolicy`` (attempts = retries + 1; same delays)."""
    return TemporalRetryPolicy(
        initial_interval=timedelta(seconds=max(retry.initial_delay, 0.001)),
        backoff_coefficient=max(retry.multiplier, 1.0),
        maximum_interval=timedelta(seconds=max(retry.max_delay, retry.initial_delay, 0.001)),
        maximum_attempts=retry.max_retries + 1,
        non_retryable_error_types=list(NON_RETRYABLE),
    )


def _model_timeout(timeouts: Timeouts | None) -> timedelta:
    """``total``, else the sum of the phase timeouts (one attempt), else 600 s."""
    if timeouts is None:
        return timedelta(seconds=_DEFAULT_MODEL_SECONDS)
    if timeouts.total is not None:
        return timedelta(seconds=timeouts.total)
    phases = [t for t in (timeouts.pool, timeouts.connect, timeouts.write, timeouts.read) if t is not None]
    return timedelta(seconds=sum(phases) if len(phases) == 4 else _DEFAULT_MODEL_SECONDS)


class _Prepare(CallAdvisor):
    """Asks the run's prompt for the output type the strategy's way (what ``spec.entity`` does before the chain)."""

    def __init__(self, output: OutputType[Any], strategy: Strategy) -> None:
        self.output = output
        self.strategy: Strategy = strategy

    @property
    def order(self) -> int:
        """Outermost: the whole run's prompt."""
        return HIGHEST_PRECEDENCE + 1

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """The request with the output asked for, down the chain."""
        return chain.next_call(self._asking(request))

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Async :meth:`advise_call`."""
        return await chain.anext_call(self._asking(request))

    def _asking(self, request: ChatClientRequest) -> ChatClientRequest:
        return request.with_prompt(prepare(request.prompt, self.output, self.strategy))


def _check_advisor(advisor: object) -> None:
    """An advisor a workflow can run: a ``CallAdvisor`` with an ``aadvise_call`` that needs no thread."""
    if not isinstance(advisor, CallAdvisor):
        raise TypeError(f'a durable advisor must be a CallAdvisor (BaseAdvisor), not {type(advisor).__name__}')
    if type(advisor).aadvise_call is CallAdvisor.aadvise_call:
        raise TypeError(
            f'{type(advisor).__name__} has no aadvise_call of its own (the default runs advise_call in a thread, '
            'which a workflow cannot): derive from BaseAdvisor or write aadvise_call'
        )


def _name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f'a registered name must be a non-empty str, got {name!r}')
    return name


_V = TypeVar('_V')


def _get(table: dict[str, _V], name: str, kind: str) -> _V:
    try:
        return table[name]
    except KeyError:
        known = ', '.join(sorted(table)) or 'none'
        raise UnknownNameError(f'no {kind} registered as {name!r} on this worker (registered: {known})') from None


_REGISTRIES: dict[str, DurableRegistry] = {}
_LOCK = threading.Lock()


def serve(task_queue: str, registry: DurableRegistry) -> None:
    """Make ``registry`` the one the workflows of ``task_queue`` in this process look names up in."""
    with _LOCK:
        _REGISTRIES[task_queue] = registry


def registry_for(task_queue: str) -> DurableRegistry:
    """The registry serving ``task_queue`` in this process."""
    registry = _REGISTRIES.get(task_queue)
    if registry is None:
        raise UnknownNameError(f'no toolweave registry serves task queue {task_queue!r} in this worker process')
    return registry
