r"""Pure-Python twin of ``toolweave._core.StreamAggregator`` (``rust/stream/mod.rs``), one file per Rust module.

The tool-call merging of OpenAI chat-completions is in :mod:`toolweave._reference.stream.openai_chat`; the other
formats' rules are in :mod:`toolweave._reference.stream.formats`; Ollama's NDJSON uses the same
line splitter (every non-blank line is one event).

SSE decoding follows the WHATWG event-stream rules: lines end at CRLF, LF or CR (a CRLF may be
split across feeds), ``:`` starts a comment, ``data:`` fields join with ``\\n``, a blank line
dispatches the event, a leading BOM is dropped, ``id``/``retry``/unknown fields are ignored.

Aggregation (a choice without ``index`` counts as 0; choices with another integer index in
``1 .. 2**63-1`` are aggregated apart, under ``choices``, by the same rules): ``delta.content`` is
concatenated into ``text``; ``delta.reasoning_content`` and ``delta.reasoning`` into ``reasoning``;
tool-call fragments merge by ``index``, else by a known ``id``, else a new id starts a call and a
fragment without id continues the most recent call; a fragment whose non-empty ``id`` differs from
the id of the call its index holds is another call (Ollama's ``/v1`` sends every parallel call at
index 0): the call with that id if known, else a new one, and the index goes to that call from
then on. ``id``/``type``/``name`` come from the first non-empty value; ``arguments`` are
concatenated. Calls are reported in order of index; a call that never got an id reports a
synthesised one (:func:`synthetic_call_id`). ``id`` and ``model`` are the first non-empty values,
``finish_reason`` and ``usage`` the last non-null ones.

Only a JSON integer in ``0 .. 2**63-1`` is a tool-call index; anything else (negative, larger, a
float, a string, null) counts as no index. A call started without an index of its own gets the
largest index so far plus one (0 for the first), or, when that would pass ``2**63-1``, the smallest
non-negative index not in use, so indices stay unique. Lookups by index and id are dicts: merging
is linear.

A number whose integer part has more than 4300 digits, or a value nested deeper than ``max_depth``
levels (200 by default, the most), makes the event a ``StreamFormatError`` (like any other bad
payload: the other events of the same ``feed()`` are still aggregated).

An aggregator is not thread-safe: use one per stream, from one thread at a time.
"""

from __future__ import annotations

import copy
import operator
import re
from collections.abc import Callable
from typing import Any

import orjson

from toolweave._reference.incremental import LiveArguments
from toolweave._reference.json import (
    MAX_DEPTH,
    NUMBER_TOO_LARGE,
    depth_reason,
    loads_strict,
    locate_error,
    max_depth_arg,
    parse_arguments,
    show,
)
from toolweave._reference.stream.formats import FORMATS
from toolweave._reference.stream.message import Message
from toolweave._reference.stream.openai_chat import ChoiceState, _str, synthetic_call_id
from toolweave.chat.finish import normalize_finish_reason
from toolweave.exceptions import ProviderStreamError, StreamFormatError, ToolArgumentsError

__all__ = ['SUPPORTED_FORMATS', 'StreamAggregator', 'synthetic_call_id']

SUPPORTED_FORMATS = ('openai-chat', 'openai-responses', 'anthropic', 'gemini', 'ollama')
_EOL = re.compile(rb'\r\n?|\n')
_BOM = b'\xef\xbb\xbf'
_TRIM = b' \t\n\r\x0c'
_BIG_DIGITS = re.compile(rb'[0-9]{19,}')
_I64_MAX = 2**63 - 1
MAX_EVENT_BYTES = 16 << 20
"""Default largest event (its data, or its pending line) in bytes."""
MAX_TOTAL_BYTES = 256 << 20
"""Default largest stream (total bytes fed)."""
_NUMBER_IN_DATA_TOO_LARGE = 'data has a number too large (more than 4300 integer digits)'


class _Failure(Exception):
    def __init__(self, error: Exception) -> None:
        self.error = error


class StreamAggregator(ChoiceState):
    """Aggregates a raw streamed chat-completions response (see the module docstring)."""

    def __init__(
        self,
        format: str = 'openai-chat',
        *,
        max_event_bytes: int | None = MAX_EVENT_BYTES,
        max_total_bytes: int | None = MAX_TOTAL_BYTES,
        invalid_utf8: str | None = 'reject',
        max_depth: int | None = MAX_DEPTH,
    ) -> None:
        super().__init__()
        self._max_depth = max_depth_arg('StreamAggregator()', max_depth)
        self._live: dict[int, LiveArguments] = {}  # partial_arguments(i, live=True), by position
        self._max_event = _positive('max_event_bytes', max_event_bytes, MAX_EVENT_BYTES)
        self._max_total = _positive('max_total_bytes', max_total_bytes, MAX_TOTAL_BYTES)
        if invalid_utf8 is not None and (
            not isinstance(invalid_utf8, str) or invalid_utf8 not in ('reject', 'replace')
        ):
            raise ValueError(f"StreamAggregator() invalid_utf8 must be 'reject' or 'replace', not {invalid_utf8!r}")
        self._replace_utf8 = invalid_utf8 == 'replace'
        self._total = 0
        self._discarding = False
        self._deltas: list[tuple[str, str]] | None = None  # recording for feed_deltas()
        if not isinstance(format, str):
            raise TypeError(f"StreamAggregator() argument 'format' must be str, not {type(format).__name__}")
        if format not in SUPPORTED_FORMATS:
            raise ValueError(f'unknown stream format {_quote(format)}; supported: {", ".join(SUPPORTED_FORMATS)}')
        self._format = format
        self._message = Message()
        self._fmt = FORMATS[format](self._message) if format != 'openai-chat' else None
        self._ndjson = format == 'ollama'
        # SSE decoder state
        self._line = b''
        self._skip_lf = False
        self._seen_first_line = False
        self._data: list[bytes] = []
        self._has_data = False
        self._event = b''
        # aggregation state
        self._id: str | None = None
        self._model: str | None = None
        self._others: dict[int, ChoiceState] = {}  # choices with index >= 1 (n > 1)
        self._usage: dict[str, Any] | None = None
        self._done = False
        self._chunks = 0
        self._events = 0
        self._error: dict[str, Any] | None = None

    @property
    def format(self) -> str:
        """The stream format name."""
        return self._format

    @property
    def error(self) -> dict[str, Any] | None:
        """The first provider error seen: ``{'event', 'message', 'data'}``, or None."""
        return copy.deepcopy(self._error)

    # --- SSE decoding -----------------------------------------------------------------------------

    def _decode(self, data: bytes, events: list[tuple[bytes, bytes]]) -> None:
        pos = 0
        if self._skip_lf and data:
            self._skip_lf = False
            if data[:1] == b'\n':
                pos = 1
        n = len(data)
        for m in _EOL.finditer(data, pos):
            line = data[pos : m.start()]
            if self._line:
                line = self._line + line
                self._line = b''
            self._process_line(line, events)
            pos = m.end()
            if pos == n and m.group() == b'\r':
                self._skip_lf = True
        if pos < n and not self._discarding:
            self._line += data[pos:]

    def _process_line(self, line: bytes, events: list[tuple[bytes, bytes]]) -> None:
        if self._discarding:
            if self._ndjson or not line:
                self._discarding = False
            return
        if not self._seen_first_line:
            self._seen_first_line = True
            if line.startswith(_BOM):
                line = line[3:]
        if self._ndjson:
            if line.strip(_TRIM):
                events.append((b'', line))
            return
        if not line:
            self._dispatch(events)
            return
        if line[:1] == b':':
            return
        field, colon, value = line.partition(b':')
        if colon and value[:1] == b' ':
            value = value[1:]
        if field == b'data':
            self._data.append(value)
            self._has_data = True
        elif field == b'event':
            self._event = value

    def _dispatch(self, events: list[tuple[bytes, bytes]]) -> None:
        if self._has_data:
            events.append((self._event, b'\n'.join(self._data)))
            self._data = []
            self._has_data = False
        self._event = b''

    # --- aggregation --------------------------------------------------------------------------------

    def _provider_error(self, event: bytes, data: bytes) -> ProviderStreamError:
        raw = data.decode('utf-8', 'replace')
        try:
            payload: Any = loads_strict(data.decode('utf-8'))
        except (UnicodeDecodeError, ToolArgumentsError):
            payload = None
            parsed = False
        else:
            parsed = True
        message = raw
        if parsed and isinstance(payload, dict):
            err = payload.get('error')
            if isinstance(err, dict):
                msg = err.get('message')
                message = msg if isinstance(msg, str) else raw
            elif isinstance(err, str):
                message = err
            elif isinstance(payload.get('message'), str):
                message = payload['message']
        info = {
            'event': event.decode('utf-8', 'replace') if event else 'message',
            'message': message,
            'data': payload if parsed else raw,
        }
        if self._error is None:
            self._error = copy.deepcopy(info)
        return ProviderStreamError(message, info)

    def _bad(self, data: bytes, what: str) -> StreamFormatError:
        excerpt = data.decode('utf-8', 'replace')[:60]
        return StreamFormatError(f"event {self._events}: {what}: '{show(excerpt)}'", self._events, excerpt)

    def _loads(self, data: bytes) -> Any:
        if data.count(b'[') + data.count(b'{') <= self._max_depth and _BIG_DIGITS.search(data) is None:
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
        try:
            text = data.decode('utf-8')
        except UnicodeDecodeError:
            raise _Failure(self._bad(data, 'data is not valid UTF-8')) from None
        error = locate_error(text, self._max_depth)
        if error is not None:
            what = {
                NUMBER_TOO_LARGE: _NUMBER_IN_DATA_TOO_LARGE,
                depth_reason(self._max_depth): f'data nests deeper than {self._max_depth} levels',
            }.get(error[1], 'data is not valid JSON')
            raise _Failure(self._bad(data, what))
        try:
            return loads_strict(text)
        except ToolArgumentsError:  # unreachable: the text was just checked
            raise _Failure(self._bad(data, 'data is not valid JSON')) from None

    def _process(self, event: bytes, data: bytes) -> dict[str, Any] | None:
        """Aggregate one event; return its chunk, None if skipped; raise _Failure if rejected."""
        self._events += 1
        if event == b'error':
            raise _Failure(self._provider_error(event, data))
        stripped = data.strip(_TRIM)
        if not stripped:
            return None
        if stripped == b'[DONE]':
            self._done = True
            return None
        chunk = self._loads(data)
        if type(chunk) is not dict:
            raise _Failure(self._bad(data, 'data is not a JSON object'))
        if chunk.get('error') is not None:
            raise _Failure(self._provider_error(event, data))
        if self._fmt is not None:
            if not self._fmt.apply(chunk):
                raise _Failure(self._provider_error(event, data))
            self._chunks += 1
            return chunk
        self._apply(chunk)
        return chunk

    def _apply(self, chunk: dict[str, Any]) -> None:
        self._chunks += 1
        if self._id is None:
            self._id = _str(chunk.get('id')) or None
        if self._model is None:
            self._model = _str(chunk.get('model')) or None
        usage = chunk.get('usage')
        if isinstance(usage, dict):
            self._usage = copy.deepcopy(usage)
        choices = chunk.get('choices')
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            index = choice.get('index', 0)
            if type(index) is not int or not 0 <= index <= _I64_MAX:
                continue
            if index == 0:
                self._apply_choice(choice, self._id or '')
            else:
                other = self._others.get(index)
                if other is None:
                    other = self._others[index] = ChoiceState()
                other._apply_choice(choice, self._id or '')

    def _run(self, events: list[tuple[bytes, bytes]], tail: Exception | None = None) -> list[dict[str, Any]]:
        chunks: list[dict[str, Any]] = []
        failure: Exception | None = None
        for event, data in events:
            if len(data) > self._max_event:
                if failure is None:
                    failure = _too_large('event', len(data), 'max_event_bytes', self._max_event)
                continue
            if self._replace_utf8:
                try:
                    data.decode('utf-8')
                except UnicodeDecodeError:
                    data = data.decode('utf-8', 'replace').encode()
            parts = self._parts()
            before = (len(parts[0]), len(parts[1] or ()))
            try:
                chunk = self._process(event, data)
            except _Failure as f:
                if failure is None:
                    failure = f.error
                continue
            if chunk is not None:
                chunks.append(chunk)
                if self._deltas is not None:
                    parts = self._parts()
                    text, reasoning = ''.join(parts[0][before[0] :]), ''.join((parts[1] or [])[before[1] :])
                    if text or reasoning:
                        self._deltas.append((text, reasoning))
        if failure is None:
            failure = tail
        if failure is not None:
            failure.chunks = chunks  # type: ignore[attr-defined]
            raise failure
        return chunks

    def _parts(self) -> tuple[list[str], list[str] | None]:
        """The text and reasoning part lists of choice 0."""
        if self._fmt is None:
            return self._text, self._reasoning
        return self._message.text, self._message.reasoning

    # --- public API ---------------------------------------------------------------------------------

    def feed_deltas(self, data: bytes) -> list[tuple[str, str]]:
        """Like :meth:`feed`, but return only ``(text_delta, reasoning_delta)`` per chunk that added either.

        The cheap path for callers that only forward text as it streams (no chunk dicts are built).
        On an error the exception's ``chunks`` holds the deltas of the good events.
        """
        self._deltas = []
        try:
            self.feed(data)
        except (StreamFormatError, ProviderStreamError) as exc:
            exc.chunks = self._deltas
            raise
        finally:
            deltas, self._deltas = self._deltas, None
        return deltas

    def feed_text(self, data: bytes, *, end: bool = False) -> tuple[str, str]:
        """Like :meth:`feed`, but return only the text and reasoning this call added, each joined.

        With ``end=True`` the call also does what :meth:`finish` does (after feeding ``data``). On an
        error the exception's ``chunks`` holds ``[(text, reasoning)]`` added by the good events (empty
        when they added nothing).
        """
        _feed_bytes(data)
        if type(end) is not bool:
            raise TypeError(f"feed_text() argument 'end' must be bool, not {type(end).__name__}")
        text, reasoning = self._parts()
        before = (len(text), len(reasoning or ()))
        failure: StreamFormatError | ProviderStreamError | None = None
        steps: list[Callable[[], object]] = [] if end and not data else [lambda: self.feed(data)]
        if end:
            steps.append(self.finish)
        for step in steps:
            try:
                step()
            except (StreamFormatError, ProviderStreamError) as exc:
                failure = failure or exc
        text, reasoning = self._parts()
        added = (''.join(text[before[0] :]), ''.join((reasoning or [])[before[1] :]))
        if failure is not None:
            failure.chunks = [added] if any(added) else []
            raise failure
        return added

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Feed raw SSE bytes (split anywhere); return the chunks this call completed, in order.

        Raises:
            StreamFormatError: An event's data is not a JSON object (the aggregator stays usable).
            ProviderStreamError: An ``event: error`` frame or a payload with a non-null ``error``.
            TypeError: ``data`` is not bytes, bytearray or a C-contiguous memoryview of 1-byte items.
        """
        raw = _feed_bytes(data)
        self._total += len(raw)
        if self._total > self._max_total:
            return self._run([], _too_large('stream', self._total, 'max_total_bytes', self._max_total))
        events: list[tuple[bytes, bytes]] = []
        self._decode(raw, events)
        pending = len(self._line) + sum(map(len, self._data)) + max(len(self._data) - 1, 0)
        tail = None
        if pending > self._max_event:
            self._line = b''
            self._data = []
            self._has_data = False
            self._event = b''
            self._discarding = True
            tail = _too_large('event', pending, 'max_event_bytes', self._max_event)
        return self._run(events, tail)

    def finish(self) -> list[dict[str, Any]]:
        """End of stream: flush an event that had no closing blank line. Idempotent."""
        events: list[tuple[bytes, bytes]] = []
        if self._line:
            line, self._line = self._line, b''
            self._process_line(line, events)
        self._skip_lf = False
        self._dispatch(events)
        return self._run(events)

    def result(self) -> dict[str, Any]:
        """The aggregated message so far (does not consume anything; call finish() first for the end)."""
        if self._fmt is not None:
            return self._other_result()
        calls = self._calls
        return {
            'format': self._format,
            'id': self._id,
            'model': self._model,
            'text': ''.join(self._text),
            'reasoning': None if self._reasoning is None else ''.join(self._reasoning),
            'tool_calls': self._tool_calls(),
            'finish_reason': self._finish_reason,
            'normalized_finish_reason': normalize_finish_reason(self._format, self._finish_reason, bool(calls)),
            'usage': copy.deepcopy(self._usage),
            'truncated': not self._done and self._finish_reason is None,
            'chunks': self._chunks,
            'blocks': [],
            'choices': [
                {
                    'index': index,
                    'text': ''.join(c._text),
                    'reasoning': None if c._reasoning is None else ''.join(c._reasoning),
                    'tool_calls': c._tool_calls(),
                    'finish_reason': c._finish_reason,
                }
                for index, c in sorted(self._others.items())
            ],
        }

    def _other_result(self) -> dict[str, Any]:
        m = self._message
        finalize = getattr(self._fmt, 'finalize', None)
        if finalize is not None:
            finalize()
        calls = m.tool_calls()
        blocks = getattr(self._fmt, 'blocks', None)
        return {
            'format': self._format,
            'id': m.id,
            'model': m.model,
            'text': ''.join(m.text),
            'reasoning': None if m.reasoning is None else ''.join(m.reasoning),
            'tool_calls': calls,
            'finish_reason': m.finish_reason,
            'normalized_finish_reason': normalize_finish_reason(self._format, m.finish_reason, bool(calls)),
            'usage': copy.deepcopy(m.usage),
            'truncated': not m.done and m.finish_reason is None,
            'chunks': self._chunks,
            'blocks': blocks() if blocks is not None else [],
            'choices': [],
        }

    def partial_arguments(self, i: int, *, live: bool = False) -> dict[str, Any]:
        """Arguments of tool call ``i`` so far, parsed in partial mode.

        The twin re-parses the whole text on every call (one-shot ``parse_arguments(text, 'partial')``);
        the Rust core gives the same values incrementally (see ``toolweave._core``), except that it
        shares already-closed containers between successive results. With ``live=True`` the result is
        the call's live value, updated in place by later calls to match (see
        :mod:`toolweave._reference.incremental`).

        Raises:
            IndexError: No tool call at index ``i`` (a position in ``result()['tool_calls']``).
            ToolArgumentsError: The arguments so far are not a prefix of a JSON object.
        """
        calls = self._tool_calls() if self._fmt is None else self._other_calls()
        try:
            position = -1 if isinstance(i, bool) else operator.index(i)
        except TypeError:
            position = -1
        if not 0 <= position < len(calls):
            raise IndexError(f'no tool call at index {i!r}')
        text = calls[position]['arguments']
        if live:  # one live value per call (its slot: positions follow the order of index)
            slot = self._ordered()[position]['slot'] if self._fmt is None else position
            return self._live.setdefault(slot, LiveArguments(self._max_depth)).parse(text)
        return parse_arguments(text, 'partial', max_depth=self._max_depth)

    def _other_calls(self) -> list[dict[str, Any]]:
        finalize = getattr(self._fmt, 'finalize', None)
        if finalize is not None:
            finalize()
        return self._message.tool_calls()

    def __repr__(self) -> str:
        return f'StreamAggregator(format={_quote(self._format)}, chunks={self._chunks})'


def _positive(name: str, value: Any, default: int) -> int:
    if value is None:
        return default
    if type(value) is bool or not isinstance(value, int) or value < 1:
        raise ValueError(f'StreamAggregator() {name} must be an int of at least 1, not {value!r}')
    return int(value)


def _too_large(what: str, size: int, limit: str, maximum: int) -> StreamFormatError:
    return StreamFormatError(f'{what} of {size} bytes is larger than {limit} ({maximum})', 0, '')


def _feed_bytes(data: Any) -> bytes:
    """The bytes of a ``feed()`` argument (same rules and messages as the Rust core)."""
    if isinstance(data, bytes):
        return bytes.__bytes__(data) if type(data) is not bytes else data
    if isinstance(data, bytearray):
        return bytes(data)
    if isinstance(data, memoryview):
        if not data.c_contiguous or data.itemsize != 1:
            raise TypeError("feed() argument 'data' must be a C-contiguous memoryview of 1-byte items")
        return data.tobytes()
    raise TypeError(f"feed() argument 'data' must be bytes, bytearray or memoryview, not {type(data).__name__}")


def _quote(text: str) -> str:
    """Quote like Rust's ``{:?}`` for plain strings (double quotes, escaped quotes and backslashes)."""
    return '"' + text.replace('\\', '\\\\').replace('"', '\\"') + '"'
