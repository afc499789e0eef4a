"""The records a durable run's workflow and activities exchange (pydantic models, JSON on the wire).

Messages, responses and events inside them are held as the tagged JSON of :mod:`toolweave.durable._codec`
(``to_json_value``), so a record is plain JSON whatever it carries.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = [
    'EventsPage',
    'MemoryCall',
    'ModelAnswer',
    'ModelCall',
    'RunInput',
    'RunOutput',
    'SearchScope',
    'SearchSession',
    'ToolInvocation',
    'ToolOutcome',
]


class RunInput(BaseModel):
    """One durable run: the messages and the registered names it uses.

    Attributes:
        messages: The prompt's messages (tagged JSON).
        model: The registered model's name.
        tools: Names of registered tools offered to the model.
        loop: Name of the registered ``ToolCallingAdvisor`` (its guards, limits, hooks).
        memory: Name of the registered chat memory, or ``None``.
        conversation_id: The memory's conversation id (``None``: the memory advisor's default).
        options: ``ChatOptions`` fields other than the tools (``model``, ``temperature``, ``max_tokens``, ...).
        tool_context: ``ToolCallingChatOptions.tool_context`` values (JSON).
        advisors: Names of registered advisors on the run's chain (with the loop, as ``ChatClient.advisors``).
        advisor_params: Advisor parameters of the request context (JSON), as ``spec.advisors(key=value)``.
        deltas: The model rounds stream, and their text and tool-call fragments become run events.
    """

    messages: list[Any]
    model: str
    tools: list[str] = Field(default_factory=list)
    loop: str = 'default'
    memory: str | None = None
    conversation_id: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    tool_context: dict[str, Any] = Field(default_factory=dict)
    advisors: list[str] = Field(default_factory=list)
    advisor_params: dict[str, Any] = Field(default_factory=dict)
    deltas: bool = False


class RunOutput(BaseModel):
    """The run's final response (tagged JSON ``ChatResponse``, or ``None`` when an advisor answered without one)."""

    response: Any = None


class ModelCall(BaseModel):
    """One model round: the registered model, the round's messages and options, the tools it is offered.

    Attributes:
        tools: Names of registered tools offered.
        definitions: Definitions (``name``, ``description``, ``input_schema``) of offered tools that are
            not registered: the tool-search tool, structured output's output tool.
        round: The round's number (of its events).
        deltas: Stream the round and send its delta events to the workflow (signal ``deltas``).
    """

    model: str
    messages: list[Any]
    options: dict[str, Any] = Field(default_factory=dict)
    tools: list[str] = Field(default_factory=list)
    definitions: list[dict[str, Any]] = Field(default_factory=list)
    round: int = 0
    deltas: bool = False


class ModelAnswer(BaseModel):
    """The round's ``ChatResponse`` (tagged JSON)."""

    response: Any


class SearchScope(BaseModel):
    """Where a tool-search call searches: the registered loop (its sessions and index), the session, the run's tools."""

    loop: str
    session_id: str
    tools: list[str]


class SearchSession(BaseModel):
    """A run's tool-search session: names to add to it; the activity answers with every name it holds."""

    scope: SearchScope
    add: list[str] = Field(default_factory=list)
    index: bool = False


class ToolInvocation(BaseModel):
    """One tool call: the registered tool, the call id, the argument text, the ``ToolContext`` values, the tool's timeout.

    ``search``: the call is the tool-search tool's, searching that scope.
    """

    tool: str
    call_id: str
    arguments: str
    context: dict[str, Any] = Field(default_factory=dict)
    timeout: float | None = None
    approved: bool = False
    search: SearchScope | None = None


class ToolOutcome(BaseModel):
    """What one tool call gave: its text, or the failure the manager turns into text (as in-process).

    Attributes:
        text: The tool's result text (``None`` on failure).
        media: The result's content parts (``Media`` as :func:`~toolweave.durable._codec.to_json_value` gives them),
            e.g. the image a tool returned; the workflow puts them back on the result (a ``ContentResult``).
        error_type: The failure's cause class name (``ValueError``, ``InvalidToolArgumentsError``, ...).
        message: The ``ToolExecutionError`` message (what the default exception processor answers).
        problems: ``InvalidToolArgumentsError.problems`` when the arguments failed the schema.
        duration: Seconds the call took in the activity (the ``ToolResult`` event's ``duration``).
    """

    text: str | None = None
    media: list[Any] = Field(default_factory=list)
    error_type: str | None = None
    message: str = ''
    problems: list[str] = Field(default_factory=list)
    duration: float = 0.0


class MemoryCall(BaseModel):
    """Memory work of a run: the registered memory, the conversation, and the messages or the final response."""

    memory: str
    conversation_id: str | None = None
    messages: list[Any] = Field(default_factory=list)
    response: Any = None


class EventsPage(BaseModel):
    """Events of a run from an index on (tagged JSON ``RunEvent``s), and whether the run has ended."""

    events: list[Any] = Field(default_factory=list)
    done: bool = False
