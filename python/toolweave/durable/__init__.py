"""Durable runs on Temporal: the tool loop survives worker crashes and runs on any worker (extra ``toolweave[temporal]``).

As pydantic-ai's Temporal agent and Temporal's OpenAI Agents SDK integration: the loop engine runs in
a Temporal workflow, each model round and each tool call is an activity, and the objects a run uses
(models, tools, tool loops, advisors, chat memories) are registered with every worker by name
(:class:`DurableRegistry`). A client (:class:`DurableClient`, or :class:`BlockingDurableClient` from
blocking code) starts a run, waits for its ``ChatResponse`` or streams its events (with ``deltas=True``
the model's text as it streams); a worker killed mid-run is replaced by any other worker of the
task queue, which replays the recorded results and runs only what had not finished.

Payloads cross the workflow boundary as JSON (orjson; pydantic records; toolweave messages and
responses as tagged JSON, :data:`DATA_CONVERTER`); a tool result above
``DurableRegistry.max_tool_result_bytes`` (default 512 KiB) reaches the model as an error text.
"""

from __future__ import annotations

from toolweave.durable._activities import TOO_LARGE, ToolweaveActivities
from toolweave.durable._client import (
    DEFAULT_TASK_QUEUE,
    BlockingDurableClient,
    BlockingDurableRun,
    DurableClient,
    DurableRun,
    DurableRunError,
    connect,
    create_replayer,
    create_worker,
)
from toolweave.durable._codec import DATA_CONVERTER
from toolweave.durable._registry import (
    DEFAULT_MAX_TOOL_RESULT_BYTES,
    NON_RETRYABLE,
    DurableRegistry,
    ToolRetry,
    UnknownNameError,
)
from toolweave.durable._workflow import WORKFLOW_NAME, RemoteToolError, ToolweaveRun

__all__ = [
    'DATA_CONVERTER',
    'DEFAULT_MAX_TOOL_RESULT_BYTES',
    'DEFAULT_TASK_QUEUE',
    'NON_RETRYABLE',
    'TOO_LARGE',
    'WORKFLOW_NAME',
    'BlockingDurableClient',
    'BlockingDurableRun',
    'DurableClient',
    'DurableRegistry',
    'DurableRun',
    'DurableRunError',
    'RemoteToolError',
    'ToolRetry',
    'ToolweaveActivities',
    'ToolweaveRun',
    'UnknownNameError',
    'connect',
    'create_replayer',
    'create_worker',
]
