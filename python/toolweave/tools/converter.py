"""Tool result conversion: the function's return value -> text (and content parts) for the model.

As Spring AI's ``DefaultToolCallResultConverter``, with two deliberate divergences: plain strings
are returned as they are (Spring JSON-quotes them), and ``None`` becomes ``Done`` unquoted; images,
files and lists of parts stay content parts (:class:`ContentResult`) that each provider sends in its
native form, where Spring sends base64 JSON text the model cannot see.
"""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import orjson

from toolweave.chat.content import Media, sniff_media_type

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ['ContentResult', 'DefaultToolCallResultConverter', 'ToolCallResultConverter', 'content_parts']


class ContentResult(str):
    """A tool result with content parts: its text (``str`` itself) plus :attr:`media`.

    A ``str`` so that every ``ToolCallback.call`` keeps returning text; the tool-calling manager moves
    :attr:`media` into :attr:`ToolResponse.media <toolweave.chat.messages.ToolResponse.media>`.

    >>> ContentResult('chart:', [Media('image/png', b'...')]).media[0].media_type
    'image/png'
    """

    media: tuple[Media, ...]

    def __new__(cls, text: str, media: Iterable[Media]) -> Self:
        """``text`` (may be ``''``) with ``media`` after it."""
        result = super().__new__(cls, text)
        result.media = tuple(media)
        return result

    def __repr__(self) -> str:
        return f'ContentResult({str(self)!r}, {list(self.media)!r})'


def content_parts(text: str) -> tuple[Media, ...]:
    """The media a converter's result carries: ``()`` for plain text."""
    return text.media if isinstance(text, ContentResult) else ()


@runtime_checkable
class ToolCallResultConverter(Protocol):
    """Turns a tool's return value into the text sent back to the model."""

    def convert(self, result: Any, return_type: Any | None = None) -> str:
        """Convert ``result`` (declared as ``return_type``, if known) to text."""
        ...


def _default(value: Any) -> Any:
    pydantic = sys.modules.get('pydantic')  # never imported here: no pydantic loaded, no pydantic model to dump
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode='json')
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode('ascii')
    raise TypeError(f'Object of type {type(value).__name__} is not JSON serializable')


def _is_pil_image(value: Any) -> bool:
    """A Pillow image, detected without importing Pillow (it is not a dependency)."""
    return any(
        cls.__module__.startswith('PIL.') and cls.__name__ == 'Image' for cls in type(value).__mro__
    ) and callable(getattr(value, 'save', None))


def _media(value: Any) -> Media | None:
    """``value`` as a content part: a :class:`Media`, bytes (type sniffed), a Pillow image (as PNG); else ``None``."""
    if isinstance(value, Media):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return Media(sniff_media_type(data) or 'application/octet-stream', data)
    if _is_pil_image(value):
        buffer = io.BytesIO()
        value.save(buffer, format='PNG')
        return Media('image/png', buffer.getvalue())
    return None


_PLAIN_JSON = frozenset({int, float, bool, dict})
"""Exact types that are never content parts (a ``dict`` is JSON whatever it holds, as :func:`_json` writes it)."""


def _is_part(value: Any) -> bool:
    return isinstance(value, (Media, bytes, bytearray, memoryview)) or _is_pil_image(value)


def _json(value: Any) -> str:
    return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()


def _parts(items: list[Any] | tuple[Any, ...]) -> ContentResult:
    """A list of parts: ``str`` items are text (joined by newlines), parts are media, other items JSON text."""
    texts: list[str] = []
    media: list[Media] = []
    for item in items:
        part = _media(item)
        if part is not None:
            media.append(part)
        else:
            texts.append(item if isinstance(item, str) else _json(item))
    return ContentResult('\n'.join(texts), media)


class DefaultToolCallResultConverter:
    """``None`` -> ``'Done'``; ``str`` -> as is; content -> :class:`ContentResult`; else JSON (orjson).

    Content parts: a :class:`~toolweave.chat.content.Media`, ``bytes`` (media type sniffed from the first
    bytes: PNG, JPEG, GIF, WebP, PDF, WAV, MP3...; ``application/octet-stream`` otherwise) and Pillow images
    (saved as PNG; Pillow is detected, never imported) become a :class:`ContentResult` with empty text and
    the part; a list or tuple holding at least one part becomes a :class:`ContentResult` whose text is its
    other items (strings as they are, the rest as JSON, joined by newlines) and whose media are its parts,
    in order. The provider sends them natively (an Anthropic image block in ``tool_result``...).
    Pydantic models, dataclasses, sets, dates, UUIDs and enums are serialised; anything else
    raises ``TypeError`` naming the type (the manager turns it into text for the model).
    """

    def convert(self, result: Any, return_type: Any | None = None) -> str:
        """Convert ``result`` to text (a :class:`ContentResult` for content); see the class docstring."""
        if result is None:
            return 'Done'
        if isinstance(result, str):
            return result
        if type(result) in _PLAIN_JSON:  # the common case: no content part to look for
            return _json(result)
        part = _media(result)
        if part is not None:
            return ContentResult('', (part,))
        if isinstance(result, (list, tuple)) and any(map(_is_part, result)):
            return _parts(result)
        return _json(result)
