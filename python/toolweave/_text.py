r"""Text that can always be encoded: lone surrogates become U+FFFD.

A Python ``str`` may hold lone surrogates (``os.listdir`` of a file name that is not UTF-8 gives
``'\\udcff'``-style escapes; a JSON ``"\\ud800"`` escape decodes to one). UTF-8 cannot encode them, so
a request body, a memory row or a span attribute holding one fails with ``UnicodeEncodeError`` or
orjson's ``TypeError: str is not valid UTF-8``. toolweave replaces each lone surrogate with U+FFFD
(REPLACEMENT CHARACTER) where text leaves the process; a surrogate pair written as two code points
is joined into the character it encodes.
"""

from __future__ import annotations

from typing import Any

__all__ = ['scrub_json', 'scrub_text']

REPLACEMENT = '\ufffd'


def scrub_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (``text`` itself when it is valid)."""
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return text.encode('utf-16-le', 'surrogatepass').decode('utf-16-le', 'replace')
    return text


def scrub_json(value: Any) -> Any:
    """A copy of a JSON-like value with :func:`scrub_text` applied to every string, keys included.

    Dicts, lists and tuples (returned as lists) are copied; other values are returned as they are.
    """
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {scrub_json(k): scrub_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_json(v) for v in value]
    return value
