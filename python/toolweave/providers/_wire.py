"""Wire helpers every provider mapping shares: tool-call arguments between JSON text and values.

A tool call's arguments travel as JSON text in :class:`~toolweave.chat.ToolCall` (as Spring AI keeps
them) and as a JSON value on the Anthropic, Gemini and Ollama wires; these are the two directions,
defined once. (Request and answer bodies go through :func:`~toolweave.providers._http.encode_json` /
:func:`~toolweave.providers._http.decode_json`.)
"""

from __future__ import annotations

from typing import Any

import orjson

from toolweave.providers._http import decode_json

__all__ = ['arguments_json', 'arguments_object', 'arguments_value']


def arguments_value(text: str) -> Any:
    """Arguments text as the JSON value a wire takes: ``{}`` for blank or unparsable text.

    (A call the model garbled still goes back to it as a call, with empty arguments, so the
    conversation stays valid; the tool loop reports the garbled text to the model separately.)
    """
    if not text.strip():
        return {}
    try:
        return decode_json(text)
    except ValueError:
        return {}


def arguments_object(text: str) -> dict[str, Any]:
    """:func:`arguments_value`, ``{}`` unless it is a JSON object (Gemini's ``args`` must be one)."""
    value = arguments_value(text)
    return value if isinstance(value, dict) else {}


def arguments_json(value: Any) -> str:
    """A wire's argument value as JSON text (``None`` as ``{}``)."""
    return orjson.dumps(value if value is not None else {}).decode()
