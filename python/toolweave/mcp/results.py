"""From an MCP ``CallToolResult`` to what the model reads: ``McpToolResult`` and ``result_text``.

Text content is the text; several parts are joined with a blank line. Images, audio, resource links
and binary resources are kept as parts and, until content parts reach chat messages natively, sent as
their compact JSON (``{"type": "image", "mimeType": ..., "data": ...}``); an embedded text resource is
its text. Structured content is kept on :class:`McpToolResult` and is the text (JSON) when the server
sent no content at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from mcp.types import CallToolResult, ContentBlock, EmbeddedResource, TextContent, TextResourceContents

__all__ = ['McpToolResult', 'result_text']


@dataclass(frozen=True)
class McpToolResult:
    """One MCP tool result, mapped.

    Attributes:
        text: What the model reads (see the module docstring).
        parts: The server's content parts, as sent.
        structured: The server's ``structuredContent`` (``None`` when it sent none).
        is_error: The server flagged the result as an error.
    """

    text: str
    parts: tuple[ContentBlock, ...]
    structured: Mapping[str, Any] | None
    is_error: bool

    @classmethod
    def of(cls, result: CallToolResult) -> McpToolResult:
        """Map ``result``."""
        return cls(result_text(result), tuple(result.content), result.structured_content, bool(result.is_error))


def result_text(result: CallToolResult) -> str:
    """The text the model reads for ``result`` (see the module docstring)."""
    if not result.content and result.structured_content is not None:
        return orjson.dumps(result.structured_content).decode()
    return '\n\n'.join(_part_text(part) for part in result.content)


def _part_text(part: ContentBlock) -> str:
    if isinstance(part, TextContent):
        return part.text
    if isinstance(part, EmbeddedResource) and isinstance(part.resource, TextResourceContents):
        return part.resource.text
    return orjson.dumps(part.model_dump(mode='json', by_alias=True, exclude_none=True)).decode()
