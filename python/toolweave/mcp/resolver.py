"""``McpToolCallbackResolver``: find an MCP tool by name for the manager's resolver fallback (Spring AI)."""

from __future__ import annotations

from toolweave.mcp.callback import McpToolCallback
from toolweave.mcp.provider import McpToolCallbackProvider

__all__ = ['McpToolCallbackResolver']


class McpToolCallbackResolver:
    """Resolves a tool name against a provider's current tools (its tool list changes included).

    Give it to ``DefaultToolCallingManager(tool_callback_resolver=..., resolution_fallback_enabled=True)``
    so calls to MCP tools named only in ``tool_names`` (or not sent with the request) are found.

    Raises:
        TypeError: ``provider`` is not an ``McpToolCallbackProvider``.
    """

    def __init__(self, provider: McpToolCallbackProvider) -> None:
        if not isinstance(provider, McpToolCallbackProvider):
            raise TypeError(f'provider must be an McpToolCallbackProvider, not {type(provider).__name__}')
        self._provider = provider

    def resolve(self, tool_name: str) -> McpToolCallback | None:
        """The provider's tool called ``tool_name`` (the name the model sees), or ``None``."""
        return next((cb for cb in self._provider.tool_callbacks if cb.tool_definition.name == tool_name), None)
