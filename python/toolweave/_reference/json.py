r"""Pure-Python twin of ``toolweave._core.parse_arguments`` (strict tool-call arguments).

Fast path: :func:`orjson.loads`. When orjson refuses the text, :func:`locate_error` (the same
scanner as ``rust/json/mod.rs``) finds the canonical error position and reason; when orjson would
lose information (integers beyond 64 bits) or nesting is deep, the text is checked with the
scanner and decoded by :func:`json.loads`.

Rules: RFC 8259 JSON; empty or JSON-whitespace-only text means ``{}``; the value must be an object;
a value nested deeper than 200 levels (or a caller's lower ``max_depth``) is rejected; ``\\u`` escapes must not leave lone surrogates;
a number whose integer part has more than 4300 digits is rejected (``number too large``; floats too,
like the Rust core: such text takes quadratic time to convert); duplicate keys: the last wins;
integers stay exact (whatever ``sys.set_int_max_str_digits`` says); floats that overflow become
infinite. Positions are 0-based character (code point) offsets.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from toolweave._reference.repair import complete_partial, repair
from toolweave.exceptions import ToolArgumentsError

__all__ = [
    'MAX_DEPTH',
    'MAX_INT_DIGITS',
    'NUMBER_TOO_LARGE',
    'loads_strict',
    'locate_error',
    'make_error',
    'max_depth_arg',
    'parse_arguments',
    'show',
]

MAX_DEPTH = 200
MAX_INT_DIGITS = 4300
NUMBER_TOO_LARGE = 'number too large (more than 4300 integer digits)'
_INT_CHUNK = 640  # the lowest limit sys.set_int_max_str_digits accepts
_EXCERPT_RADIUS = 20
_WS = ' \t\n\r'
_BIG_DIGITS = re.compile(r'[0-9]{19,}')
_HEX = frozenset('0123456789abcdefABCDEF')
_ESCAPES = frozenset('"\\/bfnrt')
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')
_DIGITS = re.compile(r'[0-9]*')


def show(text: str) -> str:
    """Render text for an error message: control characters become escapes."""
    out = []
    for c in text:
        if c == '\n':
            out.append('\\n')
        elif c == '\r':
            out.append('\\r')
        elif c == '\t':
            out.append('\\t')
        elif ord(c) < 0x20:
            out.append(f'\\u{ord(c):04x}')
        else:
            out.append(c)
    return ''.join(out)


def make_error(text: str, position: int, reason: str) -> ToolArgumentsError:
    """Build the error for character offset ``position`` of ``text``."""
    before = text[:position]
    line = before.count('\n') + 1
    nl = before.rfind('\n')
    column = position - nl if nl >= 0 else position + 1
    excerpt = text[max(0, position - _EXCERPT_RADIUS) : position + _EXCERPT_RADIUS]
    message = (
        f"invalid tool arguments at line {line} column {column} (char {position}): {reason} near '{show(excerpt)}'"
    )
    return ToolArgumentsError(message, position, excerpt, line, column)


def _hex4(text: str, at: int) -> int | None:
    h = text[at : at + 4]
    if len(h) == 4 and all(c in _HEX for c in h):
        return int(h, 16)
    return None


def _string(text: str, i: int) -> tuple[int, tuple[int, str] | None]:
    """Scan the string starting at the quote ``text[i]``; return (end, error)."""
    opening = i
    i += 1
    n = len(text)
    while True:
        m = _STRING_STOP.search(text, i)
        if m is None:
            return i, (opening, 'unterminated string')
        i = m.start()
        c = text[i]
        if c == '"':
            return i + 1, None
        if c != '\\':
            return i, (i, 'invalid control character in string')
        esc = i
        if esc + 1 >= n:
            return i, (opening, 'unterminated string')
        e = text[esc + 1]
        if e in _ESCAPES:
            i += 2
            continue
        if e != 'u':
            return i, (esc, 'invalid escape')
        cp = _hex4(text, esc + 2)
        if cp is None:
            return i, (esc, 'invalid escape')
        i = esc + 6
        if 0xDC00 <= cp < 0xE000:
            return i, (esc, 'invalid surrogate escape')
        if 0xD800 <= cp < 0xDC00:
            low = _hex4(text, i + 2) if text[i : i + 2] == '\\u' else None
            if low is None or not 0xDC00 <= low < 0xE000:
                return i, (esc, 'invalid surrogate escape')
            i += 6


def _ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _key(text: str, i: int) -> tuple[int, tuple[int, str] | None]:
    i, err = _string(text, i)
    if err:
        return i, err
    i = _ws(text, i)
    if text[i : i + 1] != ':':
        return i, (i, "expected ':'")
    return _ws(text, i + 1), None


def depth_reason(max_depth: int) -> str:
    """The reason reported for a value nested deeper than ``max_depth`` levels."""
    return f'nesting deeper than {max_depth} levels'


def locate_error(text: str, max_depth: int = MAX_DEPTH) -> tuple[int, str] | None:  # noqa: C901 - one state machine, like the Rust twin
    """Scan ``text`` as strict JSON; return (character offset, reason) of the first error, or None.

    A value nested deeper than ``max_depth`` levels (the top-level value is depth 0) is an error.
    """
    n = len(text)
    stack: list[str] = []
    i = _ws(text, 0)
    while True:
        # one value at i
        if len(stack) > max_depth:
            return i, depth_reason(max_depth)
        c = text[i] if i < n else ''
        closed = True
        if c == '':
            return i, 'expected a value'
        if c == '{':
            i = _ws(text, i + 1)
            c = text[i : i + 1]
            if c == '}':
                i += 1
            elif c == '"':
                i, err = _key(text, i)
                if err:
                    return err
                stack.append('{')
                closed = False
            else:
                return i, "expected a string key or '}'"
        elif c == '[':
            i = _ws(text, i + 1)
            if text[i : i + 1] == ']':
                i += 1
            else:
                stack.append('[')
                if i >= n:
                    return i, "expected a value or ']'"
                closed = False
        elif c == '"':
            i, err = _string(text, i)
            if err:
                return err
        elif c == '-' or '0' <= c <= '9':
            end = _number(text, i)
            if isinstance(end, str):
                return i, end
            i = end
        elif c in 'tfn':
            word = {'t': 'true', 'f': 'false', 'n': 'null'}[c]
            if not text.startswith(word, i):
                return i, 'expected a value'
            i += len(word)
        else:
            return i, 'expected a value'
        if not closed:
            continue
        # after a complete value
        while True:
            i = _ws(text, i)
            if not stack:
                return (i, 'extra data after the JSON value') if i < n else None
            c = text[i : i + 1]
            if stack[-1] == '[':
                if c == ',':
                    i = _ws(text, i + 1)
                    break
                if c == ']':
                    i += 1
                    stack.pop()
                    continue
                return i, "expected ',' or ']'"
            if c == ',':
                i = _ws(text, i + 1)
                if text[i : i + 1] != '"':
                    return i, 'expected a string key'
                i, err = _key(text, i)
                if err:
                    return err
                break
            if c == '}':
                i += 1
                stack.pop()
                continue
            return i, "expected ',' or '}'"


def _number(text: str, i: int) -> int | str:
    """End of the number starting at ``i``, or the reason it is rejected (same grammar as Rust)."""
    n = len(text)
    j = i + 1 if text[i] == '-' else i
    if j < n and text[j] == '0':
        j += 1
    elif j < n and '1' <= text[j] <= '9':
        k = _DIGITS.match(text, j).end()  # type: ignore[union-attr]
        if k - j > MAX_INT_DIGITS:
            return NUMBER_TOO_LARGE
        j = k
    else:
        return 'invalid number'
    if j < n and text[j] == '.':
        k = _DIGITS.match(text, j + 1).end()  # type: ignore[union-attr]
        if k == j + 1:
            return 'invalid number'
        j = k
    if j < n and text[j] in 'eE':
        j += 1
        if j < n and text[j] in '+-':
            j += 1
        k = _DIGITS.match(text, j).end()  # type: ignore[union-attr]
        if k == j:
            return 'invalid number'
        j = k
    return j


def _parse_int(digits: str) -> int:
    """``int()`` for JSON integers (at most 4300 digits, checked before) under any digit limit."""
    try:
        return int(digits)
    except ValueError:  # sys.set_int_max_str_digits() set below the length
        sign = -1 if digits[0] == '-' else 1
        digits = digits.lstrip('-')
        value = 0
        for at in range(0, len(digits), _INT_CHUNK):
            part = digits[at : at + _INT_CHUNK]
            value = value * 10 ** len(part) + int(part)
        return sign * value


def _check(text: str, max_depth: int = MAX_DEPTH) -> None:
    """Raise the canonical error if ``text`` is not strict JSON."""
    try:
        text.encode('utf-8')
    except UnicodeEncodeError as e:
        lossy = text.encode('utf-8', 'surrogatepass').decode('utf-8', 'replace')
        raise make_error(lossy, e.start, 'invalid character (lone surrogate)') from None
    loc = locate_error(text, max_depth)
    if loc is not None:
        raise make_error(text, *loc)


def _needs_slow_path(text: str, max_depth: int) -> bool:
    return text.count('[') + text.count('{') > max_depth or _BIG_DIGITS.search(text) is not None


def loads_strict(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """Decode strict JSON of any type, raising :class:`ToolArgumentsError` at the canonical position.

    Values may nest ``max_depth`` levels deep (at most :data:`MAX_DEPTH`).
    """
    if _needs_slow_path(text, max_depth):
        _check(text, max_depth)
        return json.loads(text, parse_int=_parse_int)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        _check(text, max_depth)
        # Valid strict JSON that orjson refuses: a float overflowing to infinity.
        return json.loads(text, parse_int=_parse_int)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return 'array'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, (int, float)):
        return 'number'
    return 'null'


_MODES = ('strict', 'partial', 'lenient')


def max_depth_arg(function: str, value: object) -> int:
    """A ``max_depth`` argument: an ``int`` from 1 to 200 (not a ``bool``); None means 200."""
    if value is None:
        return MAX_DEPTH
    if type(value) is not bool and isinstance(value, int) and 1 <= value <= MAX_DEPTH:
        return int(value)
    raise ValueError(f'{function} max_depth must be an int from 1 to {MAX_DEPTH}, not {value!r}')


def parse_arguments(
    text: str | bytes | dict[str, Any], mode: str | None = 'strict', *, max_depth: int | None = MAX_DEPTH
) -> dict[str, Any]:
    """Parse tool-call arguments as a JSON object.

    Args:
        text: The argument text as sent by the model (``str`` or UTF-8 ``bytes``), or an already
            decoded object (Ollama and Gemini send one), returned as a shallow copy.
        mode: ``'strict'`` (RFC 8259), ``'partial'`` (a truncated prefix of JSON, closed: see
            ``toolweave._reference.repair.complete_partial``) or ``'lenient'`` (LLM output
            repaired: see ``toolweave._reference.repair.repair``; valid JSON takes the strict path).
            ``None`` means strict.
        max_depth: Deepest nesting of a value (the top-level object is depth 0), 1 to 200.

    Returns:
        The decoded object; ``{}`` for empty or whitespace-only text.

    Raises:
        ToolArgumentsError: Not JSON (after completion or repair), not an object, or not UTF-8; with
            ``position`` and ``excerpt`` of the strict error in the original text.
        TypeError: ``text`` is neither ``str``, ``bytes`` nor ``dict``.
        ValueError: Unknown ``mode``, or ``max_depth`` out of range.
    """
    depth = max_depth_arg('parse_arguments()', max_depth)
    if mode is None:
        mode = 'strict'
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"parse_arguments() mode must be 'strict', 'partial' or 'lenient', not {mode!r}")
    if isinstance(text, dict):
        return dict(text)
    if isinstance(text, str):
        s = text
    elif isinstance(text, bytes):
        try:
            s = text.decode('utf-8')
        except UnicodeDecodeError as e:
            prefix = len(text[: e.start].decode('utf-8'))
            raise make_error(text.decode('utf-8', 'replace'), prefix, 'invalid UTF-8') from None
    else:
        raise TypeError(f'parse_arguments() expects str, bytes or dict, got {type(text).__name__}')
    if not s.strip(_WS):
        return {}
    if mode == 'strict':
        return _object(s, loads_strict(s, depth))
    return _parse_repaired(s, mode, depth)


def _parse_repaired(s: str, mode: str, max_depth: int) -> dict[str, Any]:
    """Partial or lenient mode on non-blank text (see :func:`parse_arguments`)."""
    if mode == 'lenient':
        found = _lenient(s, max_depth)
        if found is not None:
            return found
    # Partial, or lenient without a repair: the text as a truncated prefix ('{"a": 1, "b": tr' -> {'a': 1}).
    completed = complete_partial(s)
    if completed is not None:
        try:
            value = loads_strict(completed, max_depth)
        except ToolArgumentsError:
            value = None
        if type(value) is dict:
            return value
    return _object(s, loads_strict(s, max_depth))  # raises the strict error of the original text


def _lenient(s: str, max_depth: int) -> dict[str, Any] | None:
    r"""Lenient mode before the truncated-prefix reading; None when nothing here gives an object.

    A valid object as it is; a JSON string whose content parses (leniently) to an object, unwrapped
    (double-encoded arguments: ``"{\"a\": 1}"``); else the repair, with the objects found back to
    back merged (:func:`_merge`).
    """
    try:
        value = loads_strict(s, max_depth)
    except ToolArgumentsError:
        value = None
    if type(value) is dict:
        return value
    if isinstance(value, str):
        try:
            return parse_arguments(value, 'lenient', max_depth=max_depth)
        except ToolArgumentsError:
            pass
    objects = repair(s)
    if objects is None:
        return None
    merged: dict[str, Any] | None = None
    for position, text in objects:
        try:
            value = loads_strict(text, max_depth)
        except ToolArgumentsError:
            return None
        if type(value) is not dict:
            return None
        if merged is None:
            merged = value
        else:
            _merge(s, position, merged, value)
    return merged


def _merge(s: str, position: int, into: dict[str, Any], more: dict[str, Any]) -> None:
    """Add ``more`` (the object at ``position`` of ``s``, back to back after ``into``) to ``into``.

    Raises:
        ToolArgumentsError: ``more`` gives another value (:func:`_same`) to a key of ``into``; naming the keys.
    """
    clashes = [k for k, v in more.items() if k in into and not _same(into[k], v)]
    if clashes:
        shown = [json.dumps(k, ensure_ascii=False) for k in clashes[:5]]
        if len(clashes) > 5:
            shown.append(f'and {len(clashes) - 5} more')
        reason = f'JSON objects back to back give different values for {", ".join(shown)}: merging them would lose one'
        raise make_error(s, position, reason)
    into.update(more)


def _same(a: Any, b: Any) -> bool:
    """Equal JSON values of the same types all the way down (``1``, ``1.0`` and ``true`` differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and _same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(v, w) for v, w in zip(a, b, strict=True))
    return bool(a == b)


def _object(s: str, value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise make_error(s, len(s) - len(s.lstrip(_WS)), f'expected a JSON object, got {_kind(value)}')
    return value
