"""Content parts beyond text: images, documents (PDF), audio, as Spring AI's ``Media``.

A :class:`Media` is one part: a media type (``'image/png'``, ``'application/pdf'``, ``'audio/wav'``) and its
data, either the bytes themselves or a URL the provider fetches (``https://...``, ``gs://...``, a provider's
file id URL). :class:`~toolweave.chat.messages.UserMessage` carries them after its text (Spring's
``UserMessage(text, media)``) and so does a :class:`~toolweave.chat.messages.ToolResponse` (a tool that returned
an image). Each provider sends them in its own wire form; a part a provider cannot take raises
:class:`UnsupportedContentError` when the request is built, never dropped silently.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ['Media', 'MediaKind', 'UnsupportedContentError', 'sniff_media_type', 'tool_media_stand_in']

_MEDIA_TYPE = re.compile(r'[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*(?:\s*;[ -~]*)?', re.ASCII)
"""RFC 6838 ``type/subtype`` (lower case), then optional ``; parameters`` of printable ASCII."""
_URL_SCHEME = re.compile(r'[A-Za-z][A-Za-z0-9+.-]*:')

MediaKind = Literal['image', 'document', 'audio', 'video', 'text', 'file']
"""What a part is, from its media type: ``image/*``, ``application/pdf``, ``audio/*``, ``video/*``, ``text/*``."""

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b'\x89PNG\r\n\x1a\n', 'image/png'),
    (b'\xff\xd8\xff', 'image/jpeg'),
    (b'GIF87a', 'image/gif'),
    (b'GIF89a', 'image/gif'),
    (b'%PDF-', 'application/pdf'),
    (b'ID3', 'audio/mpeg'),
    (b'fLaC', 'audio/flac'),
    (b'OggS', 'audio/ogg'),
)


def sniff_media_type(data: bytes) -> str | None:
    """The media type the first bytes of ``data`` announce (PNG, JPEG, GIF, WebP, PDF, WAV, MP3, FLAC, OGG).

    Returns ``None`` when the bytes match none of them.
    """
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b'RIFF' and data[8:12] == b'WEBP':
        return 'image/webp'
    if data[:4] == b'RIFF' and data[8:12] == b'WAVE':
        return 'audio/wav'
    return None


class UnsupportedContentError(ValueError):
    """A provider (or model) cannot take a content part; raised while building its request.

    Attributes:
        provider: The provider's name (``'ollama'``).
        media_type: The part's media type.
        where: ``'user message'`` or ``'tool result'``.
    """

    def __init__(self, provider: str, media_type: str, where: str, hint: str = '') -> None:
        self.provider = provider
        self.media_type = media_type
        self.where = where
        message = f'{provider} cannot take {media_type} content in a {where}'
        super().__init__(f'{message}; {hint}' if hint else message)


@dataclass(frozen=True)
class Media:
    """One content part (Spring AI ``Media``): bytes or a URL, with its media type.

    Attributes:
        media_type: The MIME type, e.g. ``'image/png'``, ``'application/pdf'``, ``'audio/wav'``.
        data: The content's bytes, or a URL string (``http(s)://``, ``gs://``, ``data:`` or a provider file URI).
        name: An optional file name (sent where a provider takes one, e.g. OpenAI ``filename``).

    ``media_type`` is kept in lower case (media types are case-insensitive, RFC 6838).

    Raises:
        TypeError: ``data`` is neither bytes nor str, ``media_type`` is not a str, or ``name`` neither str nor None.
        ValueError: ``media_type`` has no ``type/subtype`` form (or holds control characters); ``data`` is a str
            without a URL scheme (base64 text, say: pass the decoded bytes) or a ``data:...;base64,`` URL whose
            base64 is broken. Caught here, when the part is made, instead of as a provider's 400 later.
    """

    media_type: str
    data: bytes | str
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.media_type, str):
            raise TypeError(f'media_type must be a str, not {type(self.media_type).__name__}')
        media_type = self.media_type.strip().lower()
        if not _MEDIA_TYPE.fullmatch(media_type):
            raise ValueError(f"media_type must look like 'image/png', not {self.media_type!r:.100}")
        object.__setattr__(self, 'media_type', media_type)
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f'name must be a str or None, not {type(self.name).__name__}')
        if isinstance(self.data, (bytearray, memoryview)):
            object.__setattr__(self, 'data', bytes(self.data))
        elif isinstance(self.data, str):
            _check_url(self.data)
        elif not isinstance(self.data, bytes):
            raise TypeError(f'data must be bytes or a URL str, not {type(self.data).__name__}')

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str | None = None, name: str | None = None) -> Media:
        """A part of ``data``; the media type is sniffed from the bytes when not given.

        Raises:
            ValueError: no ``media_type`` given and the bytes are of no known kind.
        """
        kind = media_type or sniff_media_type(data)
        if kind is None:
            raise ValueError('cannot tell the media type of these bytes; pass media_type=')
        return cls(kind, bytes(data), name)

    @classmethod
    def from_url(cls, url: str, media_type: str | None = None) -> Media:
        """A part the provider fetches from ``url``; the media type is guessed from the URL's suffix when not given.

        Raises:
            ValueError: no ``media_type`` given and the suffix names none.
        """
        kind = media_type or mimetypes.guess_type(url)[0]
        if kind is None:
            raise ValueError(f'cannot tell the media type of {url!r}; pass media_type=')
        return cls(kind, url)

    @classmethod
    def from_path(cls, path: str | Path, media_type: str | None = None) -> Media:
        """A part of a local file's bytes, named after it; the type is guessed from its suffix, then its bytes.

        Raises:
            OSError: the file cannot be read.
            ValueError: the media type cannot be told.
        """
        file = Path(path)
        data = file.read_bytes()
        return cls.from_bytes(data, media_type or mimetypes.guess_type(file.name)[0], file.name)

    @property
    def is_url(self) -> bool:
        """Whether :attr:`data` is a URL rather than bytes."""
        return isinstance(self.data, str)

    @property
    def kind(self) -> MediaKind:
        """``'image'``, ``'document'`` (PDF), ``'audio'``, ``'video'``, ``'text'`` or ``'file'`` (anything else)."""
        major = self.media_type.split('/', 1)[0]
        if major in ('image', 'audio', 'video', 'text'):
            return major  # type: ignore[return-value]
        return 'document' if self.media_type == 'application/pdf' else 'file'

    def base64(self) -> str:
        """The bytes as base64 text.

        Raises:
            ValueError: the part is a URL (it has no bytes here).
        """
        if isinstance(self.data, str):
            raise ValueError(f'{self.media_type} part is a URL ({self.data!r}), not bytes')  # noqa: TRY004 - a URL part, not a wrong type
        return base64.b64encode(self.data).decode('ascii')

    def data_url(self) -> str:
        """The part as a ``data:<type>;base64,...`` URL, or its URL when it is one."""
        return self.data if isinstance(self.data, str) else f'data:{self.media_type};base64,{self.base64()}'

    def describe(self) -> str:
        """A short text stand-in, e.g. ``'[image/png, 1234 bytes]'`` (logs, text fallbacks)."""
        what = self.data if isinstance(self.data, str) else f'{len(self.data)} bytes'
        label = f'{self.name}: ' if self.name else ''
        return f'[{label}{self.media_type}, {what}]'

    def __repr__(self) -> str:
        data = repr(self.data) if isinstance(self.data, str) else f'<{len(self.data)} bytes>'
        return f'Media({self.media_type!r}, {data}, name={self.name!r})'


def _check_url(url: str) -> None:
    """Raise ``ValueError`` unless ``url`` has a scheme (and, as a base64 ``data:`` URL, valid base64)."""
    if not _URL_SCHEME.match(url):
        raise ValueError(
            f'a str data must be a URL (https://, gs://, data:...), not {url[:40]!r}...; '
            'for inline content pass the bytes (base64.b64decode(text) if you hold base64 text)'
        )
    head, comma, payload = url.partition(',')
    if head[:5].lower() == 'data:' and head.lower().endswith(';base64') and comma:
        try:
            base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f'the data: URL holds broken base64: {exc}') from exc


def tool_media_stand_in(media: tuple[Media, ...] | list[Media]) -> str:
    """The documented text fallback for tool media a model cannot take.

    E.g. ``'[the tool returned content this model cannot take: [image/png, 1234 bytes]]'``.
    """
    return f'[the tool returned content this model cannot take: {", ".join(p.describe() for p in media)}]'
