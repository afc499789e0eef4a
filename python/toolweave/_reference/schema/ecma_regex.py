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

import dataclasses
import functools
import re
from collections.abc import Callable
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
_FLAGS = re.compile(r'\(\?([a-zA-Z]*(?:-[a-zA-Z]*)?)([:)])')
_LOOK_AROUND = re.compile(r'\(\?<?[=!]|\\[1-9]')
_BRACED_HEX = re.compile(r'\\[xuU]\{([0-9A-Fa-f]{1,8})\}')
# Escapes Rust's `regex`/`fancy-regex` take (any ASCII punctuation or space escaped is taken too); `\c` is
# translated first; digits are back-references (fancy-regex).
_ESCAPES = frozenset('dDwWsSpPbBAzxuUntrfvc123456789')
_CLASS_ESCAPES = frozenset('dDwWsSpPxuUntrfvc')
_REPEAT = re.compile(r'\{\s*\d+\s*(,\s*\d*\s*)?\}')
_QUANTIFIER = re.compile(r'[*+?]|\{\s*\d')


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
    """The matcher of ``pattern``.

    Leading look-aheads split into parts that must all match, as the crate's ``all_match``
    (``keywords/pattern.rs``), when each part compiles without look-arounds; else one regex.
    """
    parts = _split_leading_lookaheads(pattern)
    if parts:
        try:
            return _AllMatch([_compile_plain(part) for part in parts])
        except ValueError:
            pass
    return _compile_one(pattern)


def _compile_one(pattern: str) -> Any:
    import regex  # type: ignore[import-untyped]  # test dependency, only for the pure-Python twin

    _refuse_what_rust_refuses(pattern)
    try:
        return regex.compile(_translate(_escape_class_set_syntax(pattern)))
    except (regex.error, OverflowError, ValueError) as exc:
        raise ValueError(f'invalid regular expression {pattern!r}: {exc}') from None


def _compile_plain(pattern: str) -> Any:
    """``pattern`` for Rust's ``regex`` engine alone: no look-around or back-reference."""
    if _LOOK_AROUND.search(_escape_class_set_syntax(pattern)):
        raise ValueError('look-arounds need fancy-regex')
    return _compile_one(pattern)


@dataclasses.dataclass(frozen=True)
class _AllMatch:
    parts: list[Any]

    def search(self, text: str) -> bool | None:
        return all(part.search(text) is not None for part in self.parts) or None


def _split_leading_lookaheads(pattern: str) -> list[str] | None:
    """Port of the crate's ``split_leading_lookaheads``: ``^(?=A)(?=B)C`` -> ``^(?:A)``, ``^(?:B)``, ``^(?:C)``."""
    if not pattern.startswith('^'):
        return None
    rest = pattern[1:]
    parts = []
    while rest.startswith('(?='):
        after = rest[3:]
        end = _scan_top_level(after, lambda ch, depth: ch == ')' and depth == 0)
        if end is None:
            return None
        parts.append(f'^(?:{after[:end]})')
        rest = after[end + 1 :]
    alternation = _scan_top_level(rest, lambda ch, depth: ch == '|' and depth == 0)
    if not parts or rest[:1] in ('*', '+', '?', '{') or alternation is not None:
        return None
    parts.append(f'^(?:{rest})')
    return parts


def _scan_top_level(pattern: str, stop: Callable[[str, int], bool]) -> int | None:
    """Index of the first character outside escapes and classes where ``stop`` holds; None if none or unbalanced."""
    depth = 0
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == '\\':
            i += 2
            continue
        if ch == '[' and not in_class:
            in_class = True
        elif ch == ']' and in_class:
            in_class = False
        elif in_class:
            pass
        elif stop(ch, depth):
            return i
        elif ch == '(':
            depth += 1
        elif ch == ')':
            if depth == 0:
                return None
            depth -= 1
        i += 1
    return None


def _refuse_what_rust_refuses(pattern: str) -> None:  # noqa: C901 - one scan, a branch per construct
    r"""Raise ``ValueError`` for syntax the ``regex`` package takes and the crate's engines refuse.

    Escapes outside Rust's set (``\Z``, ``\0``, ``\h``, ``\é``, ``[\b]``), a ``{`` that is no repetition,
    a class escape as a range end (``[\d-a]``), atomic groups, empty or repeated flags, a repeated flag group
    and a repeated look-around (fancy-regex).
    """
    in_class = False
    groups: list[bool] = []  # per open group: whether it is a look-around
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == '\\':
            letter = pattern[i + 1] if i + 1 < len(pattern) else ''
            allowed = _CLASS_ESCAPES if in_class else _ESCAPES
            if not letter or not (letter in allowed or (letter.isascii() and not letter.isalnum())):
                raise ValueError(f'escape \\{letter} is not supported')
            i += 2
            if letter in 'pPxuU' and pattern.startswith('{', i):  # `\p{Greek}`, `\x{263A}`
                i = pattern.find('}', i) + 1 or len(pattern)
            elif letter in 'pP':  # `\pL`
                i += 1
            if in_class and letter in 'dDwWsSpP' and pattern.startswith('-', i) and pattern[i + 1 : i + 2] not in '-]':
                raise ValueError('a class escape cannot start a range')
            continue
        if in_class:
            in_class = c != ']' or pattern[i - 1] in '[^' and (pattern[i - 1] == '[' or pattern[i - 2] == '[')
        elif c == '[':
            in_class = True
        elif c == '{' and not _REPEAT.match(pattern, i):
            raise ValueError('"{" starts no repetition')
        elif c == '(':
            if pattern.startswith('(?>', i):
                raise ValueError('atomic groups are not supported')
            flags = _FLAGS.match(pattern, i)
            letters = flags.group(1).replace('-', '') if flags else ''
            if flags and (len(set(letters)) < len(letters) or flags.group(0) == '(?)'):
                raise ValueError('empty or repeated flags')
            if flags and flags.group(2) == ')':
                if _QUANTIFIER.match(pattern, flags.end()):
                    raise ValueError('flags cannot be repeated')
                i = flags.end()
                continue
            groups.append(bool(re.match(r'\(\?<?[=!]', pattern[i:])))
        elif c == ')' and groups and groups.pop() and _QUANTIFIER.match(pattern, i + 1):
            raise ValueError('a look-around cannot be repeated')
        i += 1


@dataclasses.dataclass
class _Group:
    """A group open while translating.

    Its ``m`` flag (Rust: a ``(?m)`` lasts to the group's end), where it starts in the output, and the scoped
    ``(?i:`` groups opened here for mid-group flags (closed at each ``|`` and reopened after it).
    """

    multiline: bool
    start: int = 0  # its index in the output
    scopes: list[str] = dataclasses.field(default_factory=list)


def _translate(pattern: str) -> str:  # noqa: C901 - one scan, a branch per construct
    """``pattern`` (class-set syntax escaped) in the ``regex`` package's syntax, with the crate's ECMA rewrites.

    A mid-pattern ``(?flags)`` becomes a scoped ``(?flags:...)`` to the end of its group, as Rust reads it (the
    ``regex`` package would apply it to the whole pattern).
    """
    # The crate's parser stops at the first look-around or back-reference: `\\c` before it is translated, and
    # nothing else is (fancy-regex takes the pattern).
    first = _LOOK_AROUND.search(pattern)
    plain_until = first.start() if first else len(pattern)
    rewrite_classes = first is None
    out: list[str] = []
    groups = [_Group(multiline=False)]
    in_class = repeated = False
    at_start = True  # at the start of the pattern, a group or an alternative
    atom = 0  # where the last atom starts in `out`: Rust repeats a repetition (`a*{2}`), Python needs `(?:a*){2}`
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if in_class:
            if c == '\\' and i + 1 < len(pattern):
                i += _escape(pattern, i, out, in_class=True, rewrite_classes=rewrite_classes, plain=i < plain_until)
                continue
            in_class = c != ']' or out[-1] in ('[', '[^')
            out.append(c)
            i += 1
            continue
        flags = _FLAGS.match(pattern, i) if c == '(' else None
        repeat = _REPEAT.match(pattern, i) if c == '{' else None
        if c not in '*+?' and not repeat:
            atom, repeated = len(out), False
        was_start, at_start = at_start, c in '(|'
        if c == '\\' and i + 1 < len(pattern):
            i += _escape(pattern, i, out, in_class=False, rewrite_classes=rewrite_classes, plain=i < plain_until)
            continue
        if repeat and was_start and i > plain_until:  # fancy-regex (past a look-around) reads it as text
            out.append(re.escape(repeat.group(0)))
            i = repeat.end()
            continue
        if repeat:
            if repeated:
                out.insert(atom, '(?:')
                out.append(')')
            out.append(repeat.group(0))
            repeated = True
            i = repeat.end()
            continue
        if flags:
            top = groups[-1]
            multiline = _with_flags(top.multiline, flags.group(1))
            if flags.group(2) == ')':  # to the end of the group
                top.multiline = multiline
                top.scopes.append(f'(?{flags.group(1)}:')
                out.append(top.scopes[-1])
            else:
                groups.append(_Group(multiline=multiline, start=len(out)))
                out.append(flags.group(0))
            i = flags.end()
            continue
        if c in '*+?':
            repeated = repeated or c != '?' or not out or out[-1] not in '*+?}'
            out.append(c)
        elif c == '[':
            in_class = True
            out.append('[^' if pattern.startswith('^', i + 1) else '[')
            i += 1 if pattern.startswith('^', i + 1) else 0
        elif c == '(':
            groups.append(_Group(multiline=groups[-1].multiline, start=len(out)))
            out.append(c)
        elif c == '|':
            scopes = groups[-1].scopes
            out.append(')' * len(scopes) + '|' + ''.join(scopes))
        elif c == ')':
            if len(groups) == 1:
                raise ValueError('unopened group')
            group = groups.pop()
            atom = group.start
            out.append(')' * len(group.scopes) + ')')
        elif c == '.' and rewrite_classes:
            out.append(_DOT)
        elif c == '$' and not groups[-1].multiline:
            out.append('\\Z')  # Rust's `$` without `(?m)`: the end of the text only
        else:
            out.append(c)
        i += 1
    if len(groups) > 1:
        raise ValueError('unclosed group')
    out.append(')' * len(groups[0].scopes))
    return ''.join(out)


def _with_flags(multiline: bool, flags: str) -> bool:
    """Whether ``m`` is on after ``flags`` (``ims-x``)."""
    on, _, off = flags.partition('-')
    return (multiline or 'm' in on) and 'm' not in off


def _escape(pattern: str, i: int, out: list[str], *, in_class: bool, rewrite_classes: bool, plain: bool) -> int:
    """Translate the escape at ``pattern[i]`` into ``out``; returns the characters consumed."""
    letter = pattern[i + 1]
    if letter == 'a':
        raise ValueError('the bell escape is refused')  # as the crate's translator
    if rewrite_classes and letter in _CLASS_ITEMS:
        items = _CLASS_ITEMS[letter]
        out.append(items if in_class else f'[{items}]')
        return 2
    if letter == 'c' and not plain:
        raise ValueError('\\c is translated only before a look-around')  # fancy-regex refuses it
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
