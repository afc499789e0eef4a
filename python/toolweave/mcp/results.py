"""MCP tool results and toolweave content, both ways: ``McpToolResult`` (client) and ``to_content`` (server).

Client side, from a ``CallToolResult`` to what the model reads: text parts are the text (several joined with a
blank line), and so is an embedded text resource. Images, audio and embedded binary resources become
content parts (``Media``, the decoded bytes with their MIME type): the callback returns a ``ContentResult``
and the manager puts them on the tool response, where each provider sends them natively. A resource link
(a URI only the server can read) stays text, as its JSON. Structured content is kept on
:class:`McpToolResult` and is the text (JSON) when the server sent no content at all.

Server side, the reverse: a tool's text becomes a text part and its media image, audio or embedded
resource parts (a URL part a resource link).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from toolweave.chat.content import Media
from toolweave.tools.converter import ContentResult, content_parts

__all__ = ['McpToolResult', 'to_content']


@dataclass(frozen=True)
class McpToolResult:
    """One MCP tool result, mapped.

    Attributes:
        text: What the model reads as text (see the module docstring).
        media: The image, audio and binary resource parts, decoded.
        parts: The server's content parts, as sent.
        structured: The server's ``structuredContent`` (``None`` when it sent none).
        is_error: The server flagged the result as an error.
    """

    text: str
    media: tuple[Media, ...]
    parts: tuple[ContentBlock, ...]
    structured: Mapping[str, Any] | None
    is_error: bool

    @classmethod
    def of(cls, result: CallToolResult) -> McpToolResult:
        """Map ``result``."""
        texts: list[str] = []
        media: list[Media] = []
        for part in result.content:
            kept = _media(part)
            if kept is None:
                texts.append(_text(part))
            else:
                media.append(kept)
        text = '\n\n'.join(texts)
        if not result.content and result.structured_content is not None:
            text = orjson.dumps(result.structured_content).decode()
        return cls(text, tuple(media), tuple(result.content), result.structured_content, bool(result.is_error))

    def content(self) -> str:
        """What a tool callback returns: the text, a ``ContentResult`` carrying the media when there are any."""
        return ContentResult(self.text, self.media) if self.media else self.text


def _media(part: ContentBlock) -> Media | None:
    """``part`` as a content part, or ``None`` when it is text (or its base64 is broken: then it stays JSON)."""
    if isinstance(part, (ImageContent, AudioContent)):
        data, media_type, name = part.data, part.mime_type, None
    elif isinstance(part, EmbeddedResource) and isinstance(part.resource, BlobResourceContents):
        resource = part.resource
        data, media_type, name = resource.blob, resource.mime_type or 'application/octet-stream', resource.uri
    else:
        return None
    try:
        return Media(media_type, base64.b64decode(data, validate=True), name)
    except (binascii.Error, ValueError):
        return None


def _text(part: ContentBlock) -> str:
    if isinstance(part, TextContent):
        return part.text
    if isinstance(part, EmbeddedResource) and isinstance(part.resource, TextResourceContents):
        return part.resource.text
    return orjson.dumps(part.model_dump(mode='json', by_alias=True, exclude_none=True)).decode()


def to_content(text: str) -> list[ContentBlock]:
    """A tool's result (text, or a ``ContentResult``) as MCP content: a text part (if any text), then the media."""
    blocks: list[ContentBlock] = (
        [TextContent(type='text', text=str(text))] if str(text) or not content_parts(text) else []
    )
    for index, media in enumerate(content_parts(text)):
        blocks.append(_block(media, index))
    return blocks


def _block(media: Media, index: int) -> ContentBlock:
    if isinstance(media.data, str):  # a URL the client may fetch
        return ResourceLink(uri=media.data, name=media.name or media.data, mime_type=media.media_type)
    data = base64.b64encode(media.data).decode('ascii')
    if media.media_type.startswith('image/'):
        return ImageContent(data=data, mime_type=media.media_type)
    if media.media_type.startswith('audio/'):
        return AudioContent(data=data, mime_type=media.media_type)
    uri = f'toolweave://content/{index}/{media.name or "part"}'
    return EmbeddedResource(resource=BlobResourceContents(uri=uri, mime_type=media.media_type, blob=data))
