"""Pure-Python twin of the partial and lenient modes of ``toolweave._core.parse_arguments``.

Both modes rewrite the text into strict JSON and then parse it strictly (so every value still obeys
the strict rules: depth, number size, surrogates); errors are always reported against the original
text, at the strict parser's position.

- :func:`complete_partial` closes a truncated JSON text, as jiter's ``partial_mode='trailing-strings'``
  does: an unterminated string value is kept (an incomplete escape at its end dropped), a number is
  trimmed to its valid prefix, and a member that cannot be completed (a key without value, a
  literal such as ``tru``, a dangling comma) is dropped; then the open containers are closed.
  Text that is not a prefix of valid JSON gives None.
- :func:`repair` fixes what LLMs emit (the list of DESIGN section 7): markdown code fences and prose
  around the object, single-quoted strings and keys (a ``'`` not followed by a delimiter is an
  apostrophe: ``'it's'``), Python ``True/False/None``, unquoted keys (a
  bare word followed by ``:``), raw control characters in strings, trailing commas, a stray closing
  bracket, and a missing end (closed as in partial mode). Unknown bare words in value position are
  not guessed: repair gives up (None), and lenient mode then reads the text as a truncated prefix
  (:func:`complete_partial`: ``{"a": 1, "b": tr`` gives ``{'a': 1}``). It never invents keys.
  Objects that follow the first back to back (only whitespace and commas between: ``{"a": 1}{"b": 2}``,
  one per line, a JSON array of objects) are repaired too, each returned with its position, for the
  caller to merge (a later object that cannot be repaired is read as a truncated prefix, as lenient mode
  reads the first); anything else after the first object is prose and dropped.

The Rust core (``rust/json/partial.rs``) implements the same rules; tests compare the two.
"""

from __future__ import annotations

import re

__all__ = ['complete_partial', 'repair']

_WS = ' \t\n\r'
_HEX = frozenset('0123456789abcdefABCDEF')
_NUMBER_CHARS = frozenset('0123456789+-.eE')
_FENCE = re.compile(r'```[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)(?:```|\Z)', re.DOTALL)
_LOW_PREFIX = re.compile(r'(?:\\(?:u[0-9a-fA-F]{0,3})?)?')
_WORD = re.compile(r'[A-Za-z_$][A-Za-z0-9_$]*')
_LITERALS = {'true': 'true', 'false': 'false', 'null': 'null', 'True': 'true', 'False': 'false', 'None': 'null'}


class _Invalid(Exception):
    pass


def _ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _string_end(text: str, i: int) -> int | None:
    """End (after the closing quote) of the string opening at ``i``; None at EOF; raises _Invalid."""
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == '"':
            return j + 1
        if c == '\\':
            if j + 1 >= n:
                return None
            e = text[j + 1]
            if e == 'u':
                hexes = text[j + 2 : j + 6]
                if not all(h in _HEX for h in hexes):
                    raise _Invalid
                if len(hexes) < 4:
                    return None
                j += 6
            elif e in '"\\/bfnrt':
                j += 2
            else:
                raise _Invalid
        elif c < ' ':
            raise _Invalid
        else:
            j += 1
    return None


def _partial_string(text: str, i: int) -> str:
    """The unterminated string opening at ``i``, closed (an incomplete trailing escape dropped)."""
    n = len(text)
    j = i + 1
    cut = n
    while j < n:
        if text[j] == '\\':
            if j + 1 >= n:
                cut = j
                break
            if text[j + 1] == 'u':
                if j + 6 > n:
                    cut = j
                    break
                code = int(text[j + 2 : j + 6], 16)
                if 0xD800 <= code <= 0xDBFF and _LOW_PREFIX.fullmatch(text[j + 6 :]):
                    cut = j  # a high surrogate whose low half has not (fully) arrived
                    break
                j += 6
            else:
                j += 2
        else:
            j += 1
    return text[i:cut] + '"'


def _closers(stack: list[list[object]]) -> str:
    return ''.join(str(frame[0]) for frame in reversed(stack))


def complete_partial(text: str) -> str | None:
    """Close a truncated JSON text (see the module docstring); None when it is not a valid prefix."""
    try:
        return _complete(text)
    except _Invalid:
        return None


def _complete(text: str) -> str | None:  # noqa: C901
    n = len(text)
    stack: list[list[object]] = []  # [closer, start of the current member]

    def rollback() -> str:
        if not stack:
            raise _Invalid
        return text[: int(stack[-1][1])] + _closers(stack)  # type: ignore[call-overload]

    def key(i: int) -> int | None:
        end = _string_end(text, i)
        if end is None:
            return None
        i = _ws(text, end)
        if i >= n:
            return None
        if text[i] != ':':
            raise _Invalid
        i = _ws(text, i + 1)
        return None if i >= n else i

    i = _ws(text, 0)
    while True:
        # one value at i
        if i >= n:
            return rollback()
        c = text[i]
        if c in '{[':
            closer = '}' if c == '{' else ']'
            stack.append([closer, i + 1])
            i = _ws(text, i + 1)
            if i >= n:
                return text + _closers(stack)
            if text[i] == closer:
                stack.pop()
                i += 1
            elif c == '[':
                continue
            elif text[i] == '"':
                k = key(i)
                if k is None:
                    return rollback()
                i = k
                continue
            else:
                raise _Invalid
        elif c == '"':
            end = _string_end(text, i)
            if end is None:
                if not stack:
                    raise _Invalid
                return text[:i] + _partial_string(text, i) + _closers(stack)
            i = end
        elif c in '-0123456789':
            j = i
            while j < n and text[j] in _NUMBER_CHARS:
                j += 1
            if j >= n:
                number = text[i:].rstrip('+-.eE')
                if not number or not stack:
                    return rollback()
                return text[:i] + number + _closers(stack)
            i = j
        elif c in 'tfn':
            word = {'t': 'true', 'f': 'false', 'n': 'null'}[c]
            if text.startswith(word, i):
                i += len(word)
            elif word.startswith(text[i:]):
                return rollback()
            else:
                raise _Invalid
        else:
            raise _Invalid
        # after a complete value
        while True:
            i = _ws(text, i)
            if not stack:
                if i < n:
                    raise _Invalid
                return text
            if i >= n:
                return text + _closers(stack)
            top = stack[-1]
            if text[i] == ',':
                top[1] = i
                i = _ws(text, i + 1)
                if i >= n:
                    return rollback()
                if top[0] == '}':
                    if text[i] != '"':
                        raise _Invalid
                    k = key(i)
                    if k is None:
                        return rollback()
                    i = k
                break
            if text[i] == top[0]:
                stack.pop()
                i += 1
                continue
            raise _Invalid


def _closes(text: str, i: int) -> bool:
    """Whether a ``'`` before ``text[i:]`` ends a single-quoted string (a delimiter or the end follows)."""
    k = _ws(text, i)
    return k >= len(text) or text[k] in ',:}]'


def _quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """A ``quote``-delimited string at ``i`` rewritten as a strict double-quoted one (closed at EOF).

    In a single-quoted string a ``'`` that :func:`_closes` nothing is an apostrophe (``'it's'``).
    """
    out = ['"']
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == quote and (quote == '"' or _closes(text, j + 1)):
            return ''.join(out) + '"', j + 1
        if c == '\\' and j + 1 < n:
            e = text[j + 1]
            out.append("'" if e == "'" else c + e)
            j += 2
            continue
        if c == '"':
            out.append('\\"')
        elif c == '\n':
            out.append('\\n')
        elif c == '\r':
            out.append('\\r')
        elif c == '\t':
            out.append('\\t')
        elif c < ' ':
            out.append(f'\\u{ord(c):04x}')
        elif c != '\\':
            out.append(c)
        j += 1
    return ''.join(out) + '"', n


def _drop_trailing_comma(out: list[str]) -> None:
    k = len(out) - 1
    while k >= 0 and out[k].strip(_WS) == '':
        k -= 1
    if k >= 0 and out[k] == ',':
        del out[k]


def repair(text: str) -> list[tuple[int, str]] | None:  # noqa: C901 - one tokenizer, like the Rust twin
    """Rewrite LLM output into strict JSON objects (see the module docstring); None when hopeless.

    Returns:
        The first object and each one back to back after it, as ``(position in text, strict JSON text)``.
    """
    fence = _FENCE.search(text)
    offset = 0
    if fence is not None:
        offset = fence.start(1)
        text = fence.group(1)
    start = text.find('{')
    if start < 0:
        return None
    objects: list[tuple[int, str]] = []
    out: list[str] = []
    stack: list[str] = []
    n = len(text)
    i = start
    while i < n:
        c = text[i]
        if c in _WS:
            out.append(c)
            i += 1
        elif c in '"\'':
            s, i = _quoted(text, i, c)
            out.append(s)
        elif c in '{[':
            stack.append('}' if c == '{' else ']')
            out.append(c)
            i += 1
        elif c in '}]':
            i += 1
            if not stack or stack[-1] != c:
                continue  # a stray closing bracket
            stack.pop()
            _drop_trailing_comma(out)
            out.append(c)
            if not stack:
                objects.append((offset + start, ''.join(out)))
                out = []
                nxt = _skip_separators(text, i)
                if text[nxt : nxt + 1] != '{':
                    return objects  # trailing prose is dropped
                i = start = nxt
        elif c in ',:':
            out.append(c)
            i += 1
        elif c in '-0123456789':
            j = i
            while j < n and text[j] in _NUMBER_CHARS:
                j += 1
            out.append(text[i:j])
            i = j
        else:
            m = _WORD.match(text, i)
            if m is None:
                return _hopeless(objects, text, offset, start)
            word = m.group()
            i = m.end()
            if word in _LITERALS:
                out.append(_LITERALS[word])
            elif stack and stack[-1] == '}' and text[_ws(text, i) : _ws(text, i) + 1] == ':':
                out.append(f'"{word}"')
            else:
                return _hopeless(objects, text, offset, start)
    _drop_trailing_comma(out)
    last = complete_partial(''.join(out))
    if last is None:
        return None
    objects.append((offset + start, last))
    return objects


def _hopeless(objects: list[tuple[int, str]], text: str, offset: int, start: int) -> list[tuple[int, str]] | None:
    """Repair gave up at the object starting at ``start``.

    None for the first one (lenient mode then reads the whole text as a truncated prefix); a later one is read
    that way alone.
    """
    if not objects:
        return None
    last = complete_partial(text[start:])
    return None if last is None else [*objects, (offset + start, last)]


def _skip_separators(text: str, i: int) -> int:
    """Past the whitespace and commas at ``i``."""
    n = len(text)
    while i < n and (text[i] in _WS or text[i] == ','):
        i += 1
    return i
