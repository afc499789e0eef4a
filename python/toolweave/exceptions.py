"""Exceptions raised by toolweave (the Rust core's errors are re-exported here too)."""

from __future__ import annotations

# --- Rust core (toolweave._core) -----------------------------------------------------------------
# Defined once inside toolweave._core and re-exported: the Rust implementation and the pure-Python
# twins (toolweave._reference, TOOLWEAVE_PURE=1) raise these very classes.
from toolweave._core import ProviderStreamError, StreamFormatError, ToolArgumentsError

__all__ = [
    'ChatModelError',
    'LocalModelError',
    'ProviderStreamError',
    'StreamFormatError',
    'ToolArgumentsError',
]

# --- providers (toolweave.providers) -------------------------------------------------------------


class ChatModelError(RuntimeError):
    """A chat model request failed: non-2xx answer, connection failure, timeout, malformed or failed stream.

    Attributes:
        message: The readable message (also ``str(error)``).
        status_code: The HTTP status, when the server answered.
        body: The first 500 characters of the response body, when there was one.
        provider_message: The provider's own error message, when the body or stream carried one.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        body: str | None = None,
        provider_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.body = body
        self.provider_message = provider_message


class LocalModelError(RuntimeError):
    """The embedded local model cannot run: ``xllamacpp`` or the model package missing, or the server failed to start."""
