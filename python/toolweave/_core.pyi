"""Rust core of toolweave (``toolweave._core``): stream aggregation, strict tool-argument parsing, usage sums.

Pure-Python twins with the same API live in ``toolweave._reference``; ``toolweave._native`` picks one.
"""

from collections.abc import Mapping
from typing import Any, final

__all__ = [
    'ArgumentDecoder',
    'PartialArguments',
    'SchemaValidator',
    'StreamAggregator',
    'UsageAccumulator',
    '__version__',
    'forbid_additional_properties',
    'hoist_defs_to_root',
    'numbers_fine',
    'parse_arguments',
    'to_dialect',
    'upper_case_type_values',
]

__version__: str

@final
class ArgumentDecoder:
    """Tool arguments parsed, validated and converted in one step, as pydantic-core's ``validate_json`` gives them.

    Compiled once from a pydantic core schema (``TypeAdapter(X).core_schema``: a ``typed-dict`` or ``model``,
    possibly under ``definitions``). Supported nodes: str, int, float, bool, none, nullable, any, literal,
    str/int enum, list, dict with str keys, typed-dict, model over model-fields, default (a field's schema),
    definitions; anything else (validators, unions, tuples, sets, dates, strict, string transforms,
    patterns, unknown keys or config) makes ``build`` return None. Immutable; safe from many threads. The
    pure-Python twin is ``toolweave._reference.decode.ArgumentDecoder`` (same decisions).
    """

    @staticmethod
    def build(core_schema: Mapping[str, Any]) -> ArgumentDecoder | None:
        """The decoder of ``core_schema``, or None when any part of it is outside the subset. Never raises.

        None also for a malformed schema (any reachable node, key or config not understood).
        """
    @property
    def typed_dict_factories(self) -> bool:
        """Whether a typed dict of the plan has a field with a ``default_factory``.

        Its result is in what :meth:`decode` returns as the factory made it, not judged by the numbers rule (a
        model field's is not judged by the tool's rule either); the caller judges the value as it judges
        ``validate_json``'s. Judging it in ``decode`` would answer None after the factory ran, and pydantic
        would call it a second time.
        """
    def decode(self, text: str) -> Any | None:
        """What ``validate_json(text)`` returns, or None when the decoder is not certain of it.

        Same types, enum members themselves, TypedDict keys in pydantic's order, model instances built as
        pydantic-core's ``ModelValidator`` builds them (``object.__new__``, then ``__dict__``,
        ``__pydantic_extra__``, ``__pydantic_private__``, ``__pydantic_fields_set__``; no ``__init__``);
        defaults as pydantic-core's ``with_default``: unhashable ones deep-copied, factories called. None
        when ``text`` is not an exact str holding a strict JSON object, when pydantic would refuse it or might
        coerce a value (``"3"`` or ``3.0`` for an int), when a number in the result is not an int within
        signed 64 bits or a finite float (a ``default_factory`` result is not judged: see
        :attr:`typed_dict_factories`), when containers nest deeper than 100, or when a repeated key
        meets a validated dict. The text is read once, each value straight into its final object, and the first
        value not certain stops the read (an invalid call costs a short partial read), unless the result has
        effects beyond its own objects (a ``default_factory``, a default whose deep copy runs user code, a model
        class with ``__del__``): then the whole text is parsed and checked before any of them runs.

        Raises:
            Exception: only what a ``default_factory`` (or ``copy.deepcopy`` of an unhashable default) raises.
        """
    def errors(self, text: str) -> list[dict[str, Any]] | None:
        """The errors ``validate_json(text)`` raises when pydantic surely refuses ``text``, else None.

        One ``{'type', 'loc', 'msg'}`` dict per error, as ``ValidationError.errors(include_url=False,
        include_context=False, include_input=False)`` lists them, in pydantic's order (fields in schema order,
        then extras in input order). Certain only when every value either decodes or is a certain failure of
        pydantic's lax JSON mode: a string without an ASCII digit for an int (``int_parsing``), a number with a
        fractional part for an int (``int_from_float``), a string without an ASCII digit, ``inf`` or ``nan`` for
        a float (``float_parsing``), a string that no spelling of a bool word could be or an integer other than 0
        and 1 for a bool (``bool_parsing``), a JSON type the node never takes (``*_type``; not a number for a
        str), a required field left out (``missing``), an extra of a ``forbid`` typed dict or model
        (``extra_forbidden``). None for anything else: lax coercions, bounds, lengths, literals and enums, an
        error under a field with a ``validation_alias``, a repeated key, text that is not a strict JSON object,
        a value that is not an exact str, valid arguments. Never raises (but ``MemoryError``).
        """

@final
class StreamAggregator:
    """Aggregates a raw streamed chat response (Server-Sent Events; NDJSON for ``ollama``).

    Feed raw bytes split anywhere (mid-line, mid-UTF-8 character, mid-JSON; CRLF, LF or CR line
    endings). Choice index 0 is the message; other choices (``n > 1``) are aggregated apart under
    ``result()['choices']``. Tool-call fragments merge by ``index``; without an index, by a known
    ``id``; a new id starts a call; a fragment without id continues the most recently started call. Only a JSON integer in ``0 .. 2**63-1`` is an index
    (anything else counts as none). A fragment whose non-empty ``id`` differs from the id of the call
    its index holds is another call (Ollama's ``/v1`` sends every parallel call at index 0): the call
    with that id if one is known, else a new call, and the index then goes to that call. A call
    started without an index of its own gets the largest index so far plus one (0 for the first), or
    the smallest unused index if that would pass ``2**63-1``, so indices are unique. ``id``/``type``/``name`` come from the first fragment with a non-empty
    value, ``arguments`` are concatenated. Calls are listed in order of index (not of arrival); a call
    whose provider sent no id has a synthesised one, the same over the whole stream: 9 characters of
    ``[0-9A-Za-z]`` (the only ids Mistral accepts back), a hash of the stream's ``id`` and the call's
    index. Merging is linear in the number of fragments.

    When one call to ``feed()``/``finish()`` meets bad events, every event of that call is still
    processed, then the first failure is raised with the good chunks in its ``chunks`` attribute.

    Not thread-safe: use one aggregator per stream, from one thread at a time. Using it from a
    second thread while a ``feed()`` runs raises ``RuntimeError`` (the pure-Python twin does not
    detect this).

    Args:
        format: The wire format: ``'openai-chat'`` (OpenAI chat completions and compatible servers),
            ``'openai-responses'`` (Responses API SSE), ``'anthropic'`` (Messages API SSE),
            ``'gemini'`` (``streamGenerateContent?alt=sse``) or ``'ollama'`` (native ``/api/chat``
            NDJSON: one JSON object per line). Another string raises ``ValueError``, a non-string
            ``TypeError``. The per-format rules are in ``toolweave._reference.stream.formats``.
        max_event_bytes: Largest event (its data, or its unfinished line) in bytes (default
            16 MiB). A larger one raises ``StreamFormatError`` (``event`` 0) and is skipped up to
            its end, so memory stays bounded; ``None`` means the default.
        max_total_bytes: Largest stream in bytes (default 256 MiB); every ``feed()`` past it
            raises ``StreamFormatError`` and its data is dropped.
        invalid_utf8: ``'reject'`` (default: the event is a ``StreamFormatError``) or ``'replace'``
            (invalid sequences in event data decode as U+FFFD, as ``bytes.decode(errors='replace')``).
        max_depth: Deepest nesting of a value in an event's data, and in the tool-call arguments
            ``partial_arguments()`` parses (the top-level object is depth 0): an ``int`` from 1 to
            200 (default 200, the parser's own limit; ``None`` means the default). A deeper event
            raises ``StreamFormatError`` (``data nests deeper than N levels``), at any depth: a
            100,000-bracket event is an error, never a crash. Other values raise ``ValueError``.
    """

    def __new__(
        cls,
        format: str = 'openai-chat',
        *,
        max_event_bytes: int | None = 16777216,
        max_total_bytes: int | None = 268435456,
        invalid_utf8: str | None = 'reject',
        max_depth: int | None = 200,
    ) -> StreamAggregator: ...
    @property
    def format(self) -> str:
        """The format name given to the constructor."""
    @property
    def error(self) -> dict[str, Any] | None:
        """The first provider error seen (``{'event', 'message', 'data'}``), or None."""
    def feed(self, data: bytes | bytearray | memoryview) -> list[dict[str, Any]]:
        """Feed raw bytes.

        Args:
            data: The next piece of the HTTP body: ``bytes``, ``bytearray`` or a C-contiguous
                ``memoryview`` of 1-byte items.

        Returns:
            The chunks completed by this call, in order: the parsed JSON object of each ``data:``
            event. Comments, ``[DONE]``, empty events and ``id:``/``retry:`` fields yield nothing.

        Raises:
            StreamFormatError: An event's data is not a JSON object (invalid JSON or UTF-8, an
                array..., or a number with more than 4300 integer digits).
            ProviderStreamError: An ``event: error`` frame or a payload with a non-null ``error``.
            TypeError: ``data`` is of another type (the message names it), or a memoryview that is
                not C-contiguous or has items wider than one byte.
            RuntimeError: The aggregator is in use by another thread.
        """
    def finish(self) -> list[dict[str, Any]]:
        """Signal the end of the stream: flush a last event that had no closing blank line.

        Idempotent. Returns and raises like ``feed()``.
        """
    def result(self) -> dict[str, Any]:
        """The aggregated message so far; may be called at any time and consumes nothing.

        It does not flush a pending unterminated event: call ``finish()`` first at the end.

        Returns:
            ``{'format': str, 'id': str | None, 'model': str | None, 'text': str,
            'reasoning': str | None, 'tool_calls': [{'index': int, 'id': str, 'type': str,
            'name': str, 'arguments': str, ...extras}], 'finish_reason': str | None,
            'normalized_finish_reason': str | None, 'usage': dict | None, 'truncated': bool,
            'chunks': int, 'blocks': list[dict], 'choices': list[dict]}``.
            ``reasoning`` is None until reasoning text was seen; ``finish_reason`` is the
            provider's own value and ``normalized_finish_reason`` one of ``stop``, ``length``,
            ``tool_calls``, ``content_filter``, ``error`` (unknown values pass through; ``stop``
            with tool calls reads ``tool_calls``); ``usage`` is the provider's usage object
            (Anthropic: ``message_start`` usage updated by ``message_delta``; Gemini and
            openai-chat: the last one; Ollama: the ``*_count``/``*_duration`` fields of the
            ``done`` line); ``truncated`` is True when the stream's end marker and finish reason
            are both missing; ``chunks`` counts aggregated data events. Tool-call extras:
            ``item_id`` (openai-responses), ``thought_signature`` (gemini). Gemini and Ollama
            calls without an id get ``'{response_id}-call-{index}'`` / ``'call-{index}'``.
            ``blocks`` holds Anthropic content blocks (server tools and their results included)
            with streamed ``text``/``thinking``/``signature`` and ``input_raw``; empty otherwise.
            ``choices`` (openai-chat with ``n > 1``): the choices other than 0, by index, each
            ``{'index', 'text', 'reasoning', 'tool_calls', 'finish_reason'}`` merged by the same
            rules; the top-level fields are choice 0.
        """

    def feed_deltas(self, data: bytes | bytearray | memoryview) -> list[tuple[str, str]]:
        """Like ``feed()``, but return only ``(text_delta, reasoning_delta)`` per chunk that added either.

        The cheap path for callers that forward text as it streams: no chunk dicts are built (about
        half the time of ``feed()``; see ``benches/results/core.md``). Tool calls, usage and the
        rest are in ``result()`` as usual. Errors as ``feed()``; the exception's ``chunks`` holds
        the deltas of the good events.
        """

    def feed_text(self, data: bytes | bytearray | memoryview, *, end: bool = False) -> tuple[str, str]:
        """Like ``feed()``, but return only ``(text, reasoning)`` added by this call, each joined.

        The fastest path: nothing is built per chunk, so a call costs the decoding and aggregation
        of its bytes plus two strings (under half the time of ``orjson.loads`` of the same chunks;
        see ``benches/results/core.md``). One call per network read is what a streaming UI needs;
        tool calls, usage and the rest are in ``result()``. ``end=True`` also does what
        ``finish()`` does, after feeding ``data``, so the text of an unterminated last event is not
        lost: ``feed_text(b'', end=True)`` at the end of the stream.

        Raises:
            Like ``feed()``, after every event of the call was processed; the exception's
            ``chunks`` holds ``[(text, reasoning)]`` added by the good events (``[]`` if none).
        """

    def partial_arguments(self, i: int, *, live: bool = False) -> dict[str, Any]:
        """Arguments of tool call ``i`` (a position in ``result()['tool_calls']``) so far, in partial mode.

        Equal to ``parse_arguments(arguments_so_far, mode='partial')``, but incremental: each tool call
        keeps a resumable parser (the one of :class:`PartialArguments`), which scans each byte of the
        arguments once over the whole stream and converts each member once.

        With ``live=True`` the result is the call's live value, with the contract of
        :meth:`PartialArguments.feed`: the same ``dict`` at every call, updated in place by the text
        that arrived since (a new one only when the arguments stop being a prefix of a JSON object, or
        a whole-arguments event replaced the text by one that does not extend it).

        Without it, each result is a snapshot that later text never changes: the containers of the
        open path are copied (one new ``dict``/``list`` per open level, holding references to its
        members), so that copy is the one cost per call that grows with the text: asking after every
        fragment of a long open string or array copies it at each call (about 0.1 s for 25,000 asks on
        a 200 KB string, 0.5 s on a 25,000-element array). Containers that were already closed are
        shared between successive snapshots, and asking again before new argument text arrived returns
        the same object: treat results as read-only (copy before mutating).

        Text that is not the prefix of an object, and nesting deeper than ``max_depth``, take the
        one-shot path (same values and errors); an error that more text cannot change is raised again
        without re-parsing.

        Raises:
            IndexError: No tool call at that position.
            ToolArgumentsError: The arguments so far are not a prefix of a JSON object.
        """

@final
class PartialArguments:
    """Incremental partial parser of one growing tool-call argument text, with a LIVE value.

    Feed the argument fragments of one streamed tool call as they arrive; after each, the arguments
    parsed so far are available as one ``dict`` that later fragments update in place, so following a
    whole stream costs about one parse of the final text (each byte scanned once, each member
    converted once) instead of one parse per fragment::

        p = PartialArguments()
        v = p.feed('{"city": "Par')   # {'city': 'Par'}
        p.feed('is", "days": [1')     # the same dict, now {'city': 'Paris', 'days': [1]}
        v is p.value                  # True

    Args:
        max_depth: Deepest nesting of a value (the top-level object is depth 0): an ``int`` from 1
            to 200 (default 200; ``None`` means the default). Other values raise ``ValueError``.

    Not thread-safe: a call while another thread is in ``feed()`` raises ``RuntimeError``.
    """

    def __new__(cls, max_depth: int | None = 200) -> PartialArguments: ...
    def feed(self, fragment: str) -> dict[str, Any]:
        """Add ``fragment`` to the text; return the arguments parsed so far, as the live value.

        The value equals ``parse_arguments(self.text, mode='partial', max_depth=max_depth)``: what
        partial mode keeps of the text so far (the top-level object and every container opened so
        far, each complete member, the string still being written up to its last complete
        character, a number still being written up to its valid prefix; a key or literal still
        being written is left out).

        Live contract (the Rust core and the pure-Python twin alike):

        - The first ``feed()`` returns a new ``dict`` (``{}`` for blank text); every later ``feed()``
          returns that same object, updated in place, for as long as the text is a prefix of a JSON
          object. A container (``dict``/``list``) appears when its opening bracket arrives and stays
          the same object at its place; members are added to it in place.
        - The member still being written (a string or a number) is replaced by its longer version at
          each fragment; a ``str`` or number you kept never changes. Containers that closed and
          completed members are never changed again (except by a duplicate key, whose new member
          replaces the old one in the core, while the twin updates a container found there in place).
        - A ``feed()`` that raises gives the live value up: ``value`` becomes None and the object
          returned before is no longer updated (it may hold members read before the error). More
          text cannot make a text that is not the prefix of a JSON object one, so later feeds raise
          too; should one succeed, it returns a new object (a one-shot parse) at each feed.
        - The value is the parser's: treat it as read-only (``copy.deepcopy`` it to keep a snapshot).
          A caller that changes it gets later values that may differ from the one-shot parse (or new
          objects, when an update in place fails).

        Cost: the Rust core scans only ``fragment`` (plus at most the few bytes of an escape or
        literal cut by the previous fragment) and converts each complete member once; the open string
        grows in place when nothing else holds it, and a number still being written is read again.
        A call also has a fixed cost of about 0.1 us. The twin re-parses the whole text (quadratic
        over a stream).

        Raises:
            ToolArgumentsError: The text so far is not a prefix of a JSON object (the error of
                ``parse_arguments(self.text, mode='partial')``: invalid JSON, not an object, nested
                deeper than ``max_depth``, a lone surrogate).
            TypeError: ``fragment`` is not a ``str``.
            RuntimeError: Another thread is in ``feed()``.
        """
    @property
    def value(self) -> dict[str, Any] | None:
        """The live value (the last ``feed()``'s result); None before the first feed and after one that raised."""
    @property
    def text(self) -> str:
        """All text fed so far (building the ``str`` costs its length)."""
    @property
    def max_depth(self) -> int:
        """The ``max_depth`` given to the constructor."""

def parse_arguments(
    text: str | bytes | dict[str, Any], mode: str | None = 'strict', *, max_depth: int | None = 200
) -> dict[str, Any]:
    """Parse tool-call arguments as a JSON object (strict: RFC 8259, no extensions).

    Empty or JSON-whitespace-only text gives ``{}``. Duplicate keys: the last wins. Integers of
    up to 4300 digits stay exact (whatever ``sys.set_int_max_str_digits`` says); a number whose
    integer part has more digits is rejected (``number too large``): converting it would take
    quadratic time. Floats overflowing a double become infinite. A value nested deeper than
    ``max_depth`` levels (the top-level object is depth 0; 200 at most) is rejected at any depth,
    without recursion: ``nesting deeper than N levels``.

    Modes (DESIGN section 7; the rules are in ``toolweave._reference.repair``): ``'partial'`` closes
    a truncated prefix (unterminated string values kept, numbers trimmed, incomplete members
    dropped, containers closed); ``'lenient'`` repairs LLM output (code fences and prose, single
    quotes, Python ``True/False/None``, unquoted keys, raw control characters in strings, trailing
    commas, a stray closing bracket, a missing end; else the text read as in partial mode) and costs
    one strict parse on valid input. Lenient mode also unwraps a JSON string whose content parses
    (leniently) to an object (double-encoded arguments: the object's JSON text sent as a JSON string), and reads
    every object that follows the first back to back (whitespace and commas between:
    ``{"a": 1}{"b": 2}``, one per line, an array of objects): they are merged when no key gets two
    different values (``1``, ``1.0`` and ``true`` differ), else ``ToolArgumentsError`` (at the later
    object) names the keys whose value would be lost. Both
    rewrite the text and then parse strictly, without recursion at any depth, so every strict limit
    still holds; when they cannot produce an object the strict error of the original text is raised.

    Args:
        text: The arguments as sent by the model, ``str`` or UTF-8 ``bytes``; an object that
            arrived already decoded (Ollama, Gemini) is returned as a shallow copy.
        mode: ``'strict'`` (default; ``None`` means strict), ``'partial'`` or ``'lenient'``.
        max_depth: Deepest nesting, an ``int`` from 1 to 200 (default 200; ``None`` means 200).

    Returns:
        The decoded object.

    Raises:
        ToolArgumentsError: Invalid JSON, not an object, invalid UTF-8, a lone surrogate or a
            number too large (with position and excerpt in the original text).
        TypeError: ``text`` is neither ``str``, ``bytes`` nor ``dict``.
        ValueError: An unknown ``mode``, or ``max_depth`` out of range.
    """

@final
class UsageAccumulator:
    """Sums provider usage objects over the rounds of a conversation.

    Numbers are summed key-wise, recursively through nested mappings; int plus float gives a
    float. ``None`` leaves stay ``None`` until some round has a number. Strings keep the last
    value. Bools, lists and other types, non-string keys, keys or strings with a lone surrogate,
    integers outside 64 bits, mappings nested deeper than 32 levels (the top-level mapping is level
    1; a self-referencing dict is caught this way) and a key that is a mapping in one round and a
    scalar in another raise ``TypeError`` naming the key path; a failed ``add`` changes nothing.
    A mapping whose ``items()`` repeats a key keeps the last value, as a dict built from those
    items would. The usage object is read completely before the total is touched, so a mapping's
    ``items()`` may itself call ``add`` (that round counts first). Not thread-safe: one accumulator
    per conversation.
    """

    def __new__(cls) -> UsageAccumulator: ...
    def add(self, usage: Mapping[str, Any] | None) -> None:
        """Add one round's usage object; ``None`` is ignored."""
    def total(self) -> dict[str, Any] | None:
        """A fresh copy of the running total; None before the first non-None round."""
    @property
    def rounds(self) -> int:
        """Number of non-None usages added."""
    def reset(self) -> None:
        """Forget everything."""

def hoist_defs_to_root(schema: Mapping[str, Any], root_defs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Move ``schema['$defs']`` into a copy of ``root_defs`` (Spring AI ``JsonSchemaGenerator`` rules).

    Per definition: absent -> inserted; identical -> reused; different -> inserted as ``Name_2``,
    ``Name_3``, ... (skipping names already used), with ``#/$defs/Name`` references rewritten in the
    moved schema and in the definitions inserted by this call only. Inputs are not modified.

    Returns:
        ``(schema_without_defs, new_root_defs)``.

    Raises:
        TypeError: a value is not JSON (dict, list, str, int, float, bool, None; str keys).
        ValueError: nesting deeper than 256, NaN/infinity, an int outside the 64-bit range, or a string or key
            holding a lone surrogate (the message names its JSON pointer).
    """

def forbid_additional_properties(schema: Any) -> Any:
    """A copy with ``additionalProperties: false`` on every object node that has ``properties`` and none of its own.

    ``enum``/``const``/``default``/``examples`` values are data and are not walked.

    Raises:
        TypeError, ValueError: as :func:`hoist_defs_to_root`.
    """

def numbers_fine(value: Any, model_type: type, enum_type: type) -> bool:
    """Whether every number inside ``value`` (what a tool bound from its arguments) is surely fine.

    Each exact ``int`` within the signed 64-bit range, each exact ``float`` finite; looks into exact
    dicts (keys exact ``str``), lists and tuples and instances of ``model_type`` (their ``__dict__``
    values and ``__pydantic_extra__``); ``str``, ``bool``, ``None`` and instances of ``enum_type`` are
    fine as they are. ``False`` means "look closer" (anything else, or containers nested deeper than
    32 levels), not "invalid" (:mod:`toolweave.tools._numbers` walks the value then).
    """

def upper_case_type_values(schema: Any) -> Any:
    """A copy with every ``type`` value upper-cased (``'string'`` -> ``'STRING'``; Spring ``UPPER_CASE_TYPE_VALUES``).

    Raises:
        TypeError, ValueError: as :func:`hoist_defs_to_root`.
    """

def to_dialect(schema: Mapping[str, Any], dialect: str) -> Any:
    """``schema`` rewritten for ``'openai-strict'``, ``'gemini'`` or ``'anthropic'`` (see the README table).

    Unsupported keywords move into the node's description as ``key: <compact JSON>``. ``'gemini'`` gives
    ``None`` for a schema that takes no parameters (an object, or untyped, with no or empty ``properties``
    and no ``anyOf``): send that function declaration without ``parameters``. Gemini rejects an
    ``OBJECT`` with empty ``properties`` and documents ``parameters`` as optional ("for function with
    no parameters, this can be left unset").

    Raises:
        TypeError: ``dialect`` is not a str, or a value is not JSON.
        ValueError: unknown dialect, nesting deeper than 256, a lone surrogate (named by its JSON pointer), or
            (Gemini) inlining past 100,000 nodes.
    """

@final
class SchemaValidator:
    """A compiled JSON Schema (the ``jsonschema`` crate; ``$ref`` is never fetched from the network or files).

    Args:
        schema: The schema (draft from its ``$schema``, else 2020-12). ``format`` is an annotation only.

    Raises:
        ValueError: ``schema`` is not a valid JSON Schema (or refers outside itself), or a string or key in it
            holds a lone surrogate (the message names its JSON pointer; ``is_valid``, ``errors`` and ``validate``
            refuse such an instance alike).
        TypeError: ``schema`` is not a mapping or bool, or holds non-JSON values.
    """

    def __new__(cls, schema: Mapping[str, Any] | bool) -> SchemaValidator: ...
    @property
    def schema(self) -> Any:
        """A copy of the schema."""
    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` (a JSON value) satisfies the schema."""
    def errors(self, instance: Any) -> list[dict[str, str]]:
        """Every failure as ``{'pointer': JSON pointer into instance, 'keyword': str, 'message': str}``."""
    def validate(self, instance: Any) -> None:
        """Raise ``SchemaValidationError`` (a ``ValueError``) listing every failure.

        Raises:
            SchemaValidationError: ``instance`` is invalid; ``errors`` holds the failures.
        """
    def validate_json(self, data: str | bytes, *, int64: bool = False) -> Any:
        """Parse a JSON object text (blank = ``{}``) and validate it in one step; returns the parsed value.

        The text is parsed once (jiter, straight to Python objects) and the schema validates those objects;
        results and error texts are those of ``validate(parse_arguments(data))``. Objects of the JSON Schema
        2020-12 subset tool schemas use (types, properties, required, additionalProperties, items,
        prefixItems, enum, const, numeric and size limits, allOf/anyOf/oneOf, local ``$ref``) are accepted by
        a plan compiled on first use, without the ``jsonschema`` crate; the crate decides everything else
        and lists every error.

        Args:
            data: The JSON object text.
            int64: Refuse integers above ``2**63 - 1`` too (``ValueError``), so that every integer
                of an accepted value fits a signed 64-bit column.

        Raises:
            ToolArgumentsError: not a JSON object text (position and excerpt as ``parse_arguments``).
            ValueError: a number JSON Schema cannot hold (infinite, beyond 64 bits; beyond the
                signed 64-bit range with ``int64``); checked before the schema.
            SchemaValidationError: the object is invalid.
            TypeError: ``data`` is not str or bytes.
        """
    def check_json(self, data: str | bytes, *, int64: bool = False) -> Any:
        """:meth:`validate_json` that returns the failures instead of raising them.

        Returns:
            The parsed ``dict`` when valid; else the list ``SchemaValidationError.errors`` would hold (one
            ``{'pointer', 'keyword', 'message'}`` dict per failure, never empty), without building the error.

        Raises:
            ToolArgumentsError, ValueError, TypeError: as :meth:`validate_json`.
        """
