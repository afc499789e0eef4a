r"""Twin of the Rust crate's ``pattern`` matching: ECMA-262 patterns as ``jsonschema`` 0.61 reads them.

The crate (``jsonschema-regex``'s ``to_rust_regex``) escapes ECMA class-set text Rust would read as set operators
(``[a&&b]``, ``[\w--z]``), then rewrites ``\d``, ``\w``, ``\s`` (and negations) to their ECMA ASCII/whitespace
sets and ``.`` to "anything but a line terminator", unless the pattern holds a look-around or back-reference (then it
goes to ``fancy-regex`` with only the escaping done). Rust syntax stays accepted: ``\p{L}``, ``\P{..}``, ``(?i)``,
``\x{263A}``. Here the same rewriting feeds the ``regex`` package (a test dependency, as ``jsonschema``), with ``$``
read as the end of the text (Rust's meaning; Python's ``$`` also matches before a final newline) and class escapes
inlined as ranges (Python has no nested classes).
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ['is_valid_pattern', 'search']

# ECMA-262 `\s`: WhiteSpace (TAB, VT, FF, every Zs, BOM) and LineTerminator, as `ECMA_WHITESPACE_RANGES`.
_SPACE = '\\t-\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff'
_NOT_SPACE = '\\x00-\\x08\\x0e-\\x1f!-\\x9f\\xa1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e\\u2030-\\u205e'
_NOT_SPACE += '\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\U0010ffff'
_CLASS_ITEMS = {
    'd': '0-9',
    'D': '\\x00-/:-\\U0010ffff',
    'w': 'A-Za-z0-9_',
    'W': '\\x00-/:-@\\[-^`{-\\U0010ffff',
    's': _SPACE,
    'S': _NOT_SPACE,
}
_DOT = '[^\\n\\r\\u2028\\u2029]'
_LOOK_AROUND = re.compile(r'\(\?<?[=!]|\\[1-9]')
_BRACED_HEX = re.compile(r'\\[xuU]\{([0-9A-Fa-f]{1,8})\}')


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text``, as the crate's ``pattern`` keyword.

    Raises:
        ValueError: ``pattern`` is not a regex the crate accepts.
    """
    return _compiled(pattern).search(text) is not None


def is_valid_pattern(pattern: object) -> bool:
    """Whether ``pattern`` is a str the crate compiles (the ``regex`` format of the meta-schema)."""
    if not isinstance(pattern, str):
        return True
    try:
        _compiled(pattern)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    import regex  # type: ignore[import-untyped]  # test dependency, only for the pure-Python twin

    text = _escape_class_set_syntax(pattern)
    try:
        return regex.compile(_translate(text, rewrite_classes=_LOOK_AROUND.search(text) is None))
    except (regex.error, OverflowError, ValueError) as exc:
        raise ValueError(f'invalid regular expression {pattern!r}: {exc}') from None


def _translate(pattern: str, *, rewrite_classes: bool) -> str:
    """``pattern`` (class-set syntax escaped) in the ``regex`` package's syntax, with the crate's ECMA rewrites."""
    multiline = re.search(r'\(\?[a-zA-Z]*m', pattern) is not None
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == '\\' and i + 1 < len(pattern):
            i += _escape(pattern, i, out, in_class=in_class, rewrite_classes=rewrite_classes)
            continue
        if in_class:
            in_class = c != ']' or out[-1] in ('[', '[^')
            out.append(c)
        elif c == '[':
            in_class = True
            out.append('[^' if pattern.startswith('^', i + 1) else '[')
            i += 1 if pattern.startswith('^', i + 1) else 0
        elif c == '.' and rewrite_classes:
            out.append(_DOT)
        elif c == '$' and not multiline:
            out.append('\\Z')  # Rust's `$` without `(?m)`: the end of the text only
        else:
            out.append(c)
        i += 1
    return ''.join(out)


def _escape(pattern: str, i: int, out: list[str], *, in_class: bool, rewrite_classes: bool) -> int:
    """Translate the escape at ``pattern[i]`` into ``out``; returns the characters consumed."""
    letter = pattern[i + 1]
    if letter == 'a':
        raise ValueError('the bell escape is refused')  # as the crate's translator
    if rewrite_classes and letter in _CLASS_ITEMS:
        items = _CLASS_ITEMS[letter]
        out.append(items if in_class else f'[{items}]')
        return 2
    if letter == 'c' and i + 2 < len(pattern) and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
        out.append(f'\\x{ord(pattern[i + 2]) % 32:02x}')
        return 3
    braced = _BRACED_HEX.match(pattern, i)
    if braced:
        out.append(f'\\U{int(braced.group(1), 16):08x}')
        return braced.end() - i
    out.append(pattern[i : i + 2])
    return 2


def _escape_class_set_syntax(pattern: str) -> str:  # noqa: C901 - one state machine, as the crate's
    """Port of the crate's ``escape_class_set_syntax``: ``&&``, ``~~`` and literal ``--`` in a class escaped."""
    escapes: set[int] = set()
    in_class = escaped = class_initial = after_class_escape = False
    state = 'start'  # 'start' | 'after_atom' | 'range_end', the crate's ClassState

    def consume() -> None:
        nonlocal state
        state = 'start' if state == 'range_end' else 'after_atom'

    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        nxt = pattern[i + 1] if i + 1 < n else ''
        if escaped:
            escaped = False
            if in_class:
                consume()
                after_class_escape = c in 'dDsSwW'
                class_initial = False
        elif c == '\\':
            escaped = True
        elif c == '[':
            if in_class:
                escapes.add(i)
                consume()
                after_class_escape = class_initial = False
            else:
                in_class, state, after_class_escape, class_initial = True, 'start', False, True
        elif c == ']' and in_class:
            in_class, state, after_class_escape = False, 'start', False
        elif not in_class:
            pass
        elif c == '^' and class_initial:
            class_initial = False
        elif c == '-' and after_class_escape and nxt == '-':
            escapes.update((i, i + 1))
            i += 1
            consume()
            after_class_escape = class_initial = False
        elif c == '-' and state == 'after_atom' and nxt and nxt != ']':
            state = 'range_end'
            after_class_escape = False
        else:
            if c in '&~' and nxt == c:
                escapes.update((i, i + 1))
                i += 1
                consume()  # the crate consumes an atom for the pair, then one more below
            elif c == '-' and ((i > 0 and pattern[i - 1] == '-') or nxt == '-'):
                escapes.add(i)
            consume()
            after_class_escape = class_initial = False
        i += 1
    return ''.join(f'\\{ch}' if k in escapes else ch for k, ch in enumerate(pattern))
