"""The ``ToolCallback`` protocol: a tool the manager can execute from the model's argument JSON."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from toolweave.tools.context import ToolContext
from toolweave.tools.definition import ToolDefinition, ToolMetadata

__all__ = ['ToolCallback']


@runtime_checkable
class ToolCallback(Protocol):
    """A tool: its definition, its metadata and how to call it (Spring AI ``ToolCallback``).

    ``call`` receives the raw argument JSON text and returns the text for the model; failures are
    raised as ``ToolExecutionError`` so the manager's exception processor can turn them into text.
    """

    @property
    def tool_definition(self) -> ToolDefinition:
        """Name, description and input schema sent to the model."""
        ...

    @property
    def tool_metadata(self) -> ToolMetadata:
        """Result handling (``return_direct``)."""
        ...

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Run the tool on ``tool_input`` (a JSON object text) and return the result text."""
        ...

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Async form of :meth:`call` (async tools run on the event loop, sync ones in a thread)."""
        ...
