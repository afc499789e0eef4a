"""Twin of ``rust/stream/openai_chat/``: one choice of an OpenAI chat-completions stream.

The merging rules are in the docstring of :mod:`toolweave._reference.stream`.
"""

from __future__ import annotations

from typing import Any

__all__ = ['ChoiceState', 'synthetic_call_id']

_I64_MAX = 2**63 - 1


def _index(value: Any) -> int | None:
    """A tool-call index: a JSON integer in 0 .. 2**63-1; anything else is no index."""
    if type(value) is int and 0 <= value <= _I64_MAX:
        return value
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'


def synthetic_call_id(stream_id: str, index: int) -> str:
    """The id of a call whose provider sent none: 9 characters of ``[0-9A-Za-z]``.

    Mistral accepts no other tool call ids. It is the FNV-1a hash (64 bits) of the stream's ``id`` as
    known when the call started (``''`` if none), a NUL byte and the call's index in decimal, written
    in base 62: stable over the stream, different for the calls of one response and between responses
    with different ids.
    """
    h = 0xCBF29CE484222325
    for b in stream_id.encode() + b'\0' + str(index).encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    digits = []
    for _ in range(9):
        h, r = divmod(h, 62)
        digits.append(_ID_ALPHABET[r])
    return ''.join(reversed(digits))


class ChoiceState:
    """The aggregation state of one choice: text, reasoning, finish reason and merged tool calls."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] | None = None
        self._calls: list[dict[str, Any]] = []
        # The call each index goes to: a call's own index (the keys are the indices in use), or the
        # index a provider sent with a call that got another one.
        self._by_index: dict[int, dict[str, Any]] = {}
        self._by_id: dict[str, int] = {}  # id -> first slot in _calls with that id
        self._max_index: int | None = None
        self._lowest_free = 0  # no index below this is free (used once _max_index is 2**63-1)
        self._stream_id = ''  # the stream's id while a choice is applied (for synthetic call ids)
        self._finish_reason: str | None = None

    def _ordered(self) -> list[dict[str, Any]]:
        """The calls in order of index."""
        return sorted(self._calls, key=lambda c: int(c['index']))

    def _tool_calls(self) -> list[dict[str, Any]]:
        return [
            {
                'index': c['index'],
                'id': c['id'] or c['synthetic_id'],
                'type': c['type'] or 'function',
                'name': c['name'],
                'arguments': ''.join(c['arguments']),
            }
            for c in self._ordered()
        ]

    def _apply_choice(self, choice: dict[str, Any], stream_id: str = '') -> None:
        self._stream_id = stream_id
        delta = choice.get('delta')
        if isinstance(delta, dict):
            self._apply_delta(delta)
        finish = _str(choice.get('finish_reason'))
        if finish is not None:
            self._finish_reason = finish

    def _apply_delta(self, delta: dict[str, Any]) -> None:
        content = _str(delta.get('content'))
        if content is not None:
            self._text.append(content)
        for key in ('reasoning_content', 'reasoning'):
            part = _str(delta.get(key))
            if part is not None:
                if self._reasoning is None:
                    self._reasoning = []
                self._reasoning.append(part)
        fragments = delta.get('tool_calls')
        if isinstance(fragments, list):
            for fragment in fragments:
                if isinstance(fragment, dict):
                    self._merge(fragment)

    def _merge(self, fragment: dict[str, Any]) -> None:
        index = _index(fragment.get('index'))
        call_id = _str(fragment.get('id')) or None
        function = fragment.get('function')
        name = arguments = None
        if isinstance(function, dict):
            name = _str(function.get('name'))
            arguments = _str(function.get('arguments'))
        call: dict[str, Any] | None
        if index is not None:
            call = self._by_index.get(index)
            if call is None:
                call = self._new_call(index)
            elif call_id is not None and call['id'] and call['id'] != call_id:  # another call at this index
                slot = self._by_id.get(call_id)
                call = self._new_call(self._next_index()) if slot is None else self._calls[slot]
                self._by_index[index] = call
        elif call_id is not None:
            slot = self._by_id.get(call_id)
            call = self._new_call(self._next_index()) if slot is None else self._calls[slot]
        elif self._calls:
            call = self._calls[-1]
        else:
            call = self._new_call(self._next_index())
        if not call['id'] and call_id:
            call['id'] = call_id
            slot = self._by_id.get(call_id)
            if slot is None or call['slot'] < slot:
                self._by_id[call_id] = call['slot']
        kind = _str(fragment.get('type'))
        if not call['type'] and kind:
            call['type'] = kind
        if not call['name'] and name:
            call['name'] = name
        if arguments is not None:
            call['arguments'].append(arguments)

    def _next_index(self) -> int:
        if self._max_index is None:
            return 0
        if self._max_index < _I64_MAX:
            return self._max_index + 1
        while self._lowest_free in self._by_index:
            self._lowest_free += 1
        return self._lowest_free

    def _new_call(self, index: int) -> dict[str, Any]:
        call: dict[str, Any] = {
            'index': index,
            'id': '',
            'synthetic_id': synthetic_call_id(self._stream_id, index),
            'type': '',
            'name': '',
            'arguments': [],
            'slot': len(self._calls),
        }
        self._calls.append(call)
        self._by_index[index] = call
        if self._max_index is None or index > self._max_index:
            self._max_index = index
        return call
