r"""Constrained decoding for :class:`~toolweave.providers.local.LocalChatModel`: what each round may write.

The embedded llama.cpp is built with llguidance, so a request's ``grammar`` may be a Lark grammar
(``%llguidance {}``) that embeds JSON schemas (``%json {...}``). Each round gets one:

- a *call* round (:func:`call_grammar`): exactly ``n`` ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  blocks, each a call to one of the offered tools with arguments valid for that tool's input schema.
  The model still chooses the tool and the values; free string values are *grounded*: they must be
  a span of one to four words of the user's question (:func:`spans`), and numbers one written in it
  (when it has any), so a value can never come from an example or from nowhere;
- an *answer* round (:func:`answer_grammar`): one sentence of plain text (no ``<``, so no markup,
  and no special token), whose numbers are only those of the tool results and the question.

:func:`parse_calls` turns a call round's text into tool calls, :func:`clean_answer` strips markup and
special tokens from any text, and :func:`mentions_results` tells whether an answer restates a tool result.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from toolweave.tools.definition import ToolDefinition

__all__ = [
    'answer_grammar',
    'answer_vocabulary',
    'call_grammar',
    'clean_answer',
    'content_words',
    'ground_schema',
    'mentions_results',
    'numbers_in',
    'parse_calls',
    'question_parts',
    'relevant_tools',
    'spans',
]

MAX_SPAN_WORDS = 4
"""Longest word span a grounded string value may be (``"New York"``, ``"the printer on floor"``)."""
MAX_SPANS = 400
"""Spans per grammar at most (a 100-word question has about that many of up to four words)."""
MAX_ARRAY_ITEMS = 5
FREE_STRING_MAX_LENGTH = 64
"""maxLength of a string left free (no question to ground it in), so a call round always ends."""
MAX_CALLS = 3
"""Calls in one round at most (one per coordinated part of the question)."""

_GUIDANCE = {'whitespace_flexible': False, 'key_separator': ': ', 'item_separator': ', '}
_EDGE_PUNCTUATION = '?.,!;:"\'()[]{}«»“”‘’¿¡。，、？！：；（）'
_CJK = re.compile(r'[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]')
_NUMBER = re.compile(r'(?<![\d.])-?\d+(?:\.\d+)?')
_COORDINATOR = re.compile(r'\s+(?:and|or|vs\.?|versus|&)\s+|[,;]\s*|\s*(?:和|与|以及|및|と)\s*', re.IGNORECASE)
_STRING_KEYS = ('enum', 'const', 'format', 'pattern')
_STOPWORDS = frozenset(
    'the and for with from that this are was were has have not you your its his her their our out into '  # noqa: SIM905 - a word list reads best as text
    'about what which who when where how why is it of to in on at by a an be as or if then than there do '
    'does did can could would should will me my i we us he she they them please tell give show'.split()
)


def _words(text: str) -> list[str]:
    words = []
    for raw in text.split():
        word = raw.strip(_EDGE_PUNCTUATION)
        if word.endswith(("'s", '’s')):
            word = word[:-2]
        if word:
            words.append(word)
    return words


def spans(text: str) -> list[str]:
    """Every run of one to :data:`MAX_SPAN_WORDS` words of ``text`` (edge punctuation stripped), first seen first.

    A run may not start or end with a function word (``the``, ``in``, ``what``, ...): ``'in Paris'``
    and ``'the'`` are not values, ``'Paris'`` and ``'printer on floor 3'`` are.

    Words with Chinese, Japanese or Korean characters also give their runs of one to four characters.
    At most :data:`MAX_SPANS`.
    """
    words = _words(text)
    found: dict[str, None] = {}
    for size in range(1, MAX_SPAN_WORDS + 1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if run[0].lower() not in _STOPWORDS and run[-1].lower() not in _STOPWORDS:
                found.setdefault(' '.join(run))
    for word in words:
        if _CJK.search(word):
            for size in range(1, 5):
                for start in range(len(word) - size + 1):
                    found.setdefault(word[start : start + size])
    return list(found)[:MAX_SPANS]


def numbers_in(texts: Iterable[str]) -> list[str]:
    """The numbers written in ``texts`` (``'14'``, ``'-3'``, ``'0.62'``), first seen first, without repeats."""
    found: dict[str, None] = {}
    for text in texts:
        for match in _NUMBER.findall(text):
            found.setdefault(match)
    return list(found)


def _has_entity(part: str, first: bool) -> bool:
    words = _words(part)[1:] if first else _words(part)
    return any(w[0].isupper() and w != 'I' for w in words) or bool(_NUMBER.search(part) or _CJK.search(part))


def question_parts(question: str) -> list[str]:
    """The coordinated parts of ``question`` that each name something (one call each), else ``[question]``.

    ``'Compare the weather in Rome and in Madrid'`` -> ``['Compare the weather in Rome', 'in Madrid']``.
    A part names something when it holds a capitalised word (not the sentence's first word, not
    ``I``), a number, or CJK text. At most :data:`MAX_CALLS` parts.
    """
    parts = [p.strip() for p in _COORDINATOR.split(question) if p and p.strip(_EDGE_PUNCTUATION + ' ')]
    named = [p for i, p in enumerate(parts) if _has_entity(p, i == 0)]
    return named[:MAX_CALLS] if len(named) > 1 else [question]


def _stem(word: str) -> str:
    word = word.lower()
    for suffix, replacement, shortest in (('ies', 'y', 5), ('ing', '', 6), ('es', '', 5), ('ed', '', 5), ('s', '', 4)):
        if word.endswith(suffix) and len(word) >= shortest:
            return word[: -len(suffix)] + replacement
    return word


def _stems(text: str) -> set[str]:
    words = re.findall(r'[^\W\d_]+', re.sub(r'(?<=[a-z0-9])(?=[A-Z])|_', ' ', text))
    return {_stem(w) for w in words if len(w) > 2 and w.lower() not in _STOPWORDS}


def _tool_stems(definition: ToolDefinition) -> set[str]:
    properties = definition.input_schema.get('properties')
    names = ' '.join(str(n) for n in properties) if isinstance(properties, Mapping) else ''
    return _stems(f'{definition.name} {definition.description} {names}')


def relevant_tools(definitions: Sequence[ToolDefinition], questions: Sequence[str]) -> tuple[ToolDefinition, ...]:
    """The tools sharing the most words with the first of ``questions`` (newest first) that shares any; else none.

    Words are compared stemmed (``teas`` ~ ``tea``, ``ordering`` ~ ``order``), without function
    words, against each tool's name, description and parameter names. ``'Order 2 teas'`` ->
    ``place_order``; a follow-up such as ``'And in Tokyo?'`` shares none, so the question before it decides.
    """
    for question in questions:
        wanted = _stems(question)
        scores = [len(wanted & _tool_stems(d)) for d in definitions]
        best = max(scores, default=0)
        if best:
            return tuple(d for d, score in zip(definitions, scores, strict=True) if score == best)
    return ()


def _alternation(values: Sequence[str]) -> str:
    return '^(' + '|'.join(re.escape(v) for v in values) + ')$'


def ground_schema(schema: Mapping[str, Any], words: Sequence[str], numbers: Sequence[str]) -> dict[str, Any]:
    """A copy of ``schema`` whose free values must come from the question.

    A string with no ``enum``/``const``/``format``/``pattern`` gets ``pattern`` = one of ``words``
    (or a :data:`FREE_STRING_MAX_LENGTH` bound when there are none); a word that is only a number
    (``'2'`` of ``'order 2 teas'``) only for a property whose name or description says it is an id,
    number, code, ...; an integer or number gets ``enum`` = the ``numbers`` of its kind, or, when
    there are none, its ``default``, ``minimum`` or 1; an optional numeric property is dropped when
    the question has no number. Arrays get at most :data:`MAX_ARRAY_ITEMS` items. Walks properties,
    items, ``anyOf``/``oneOf``/``allOf`` and ``$defs``.
    """
    grounded = copy.deepcopy(dict(schema))
    _ground(grounded, words, numbers)
    return grounded


_NUMERIC_NAME = re.compile(r'id|number|code|zip|phone|year|version|no\b|num', re.IGNORECASE)


def _is_numeric(node: Mapping[str, Any]) -> bool:
    kind = node.get('type')
    kinds = set(kind) if isinstance(kind, list) else {kind}
    branches = [b for b in node.get('anyOf') or node.get('oneOf') or () if isinstance(b, Mapping)]
    if branches:
        kinds = {b.get('type') for b in branches}
    return bool(kinds - {'null'}) and kinds - {'null'} <= {'integer', 'number'}


def _ground_scalar(node: dict[str, Any], kinds: set[Any], words: Sequence[str], numbers: Sequence[str]) -> None:
    if kinds == {'string'} and not any(k in node for k in _STRING_KEYS):
        if words:
            node['pattern'] = _alternation(words)
        else:
            node['maxLength'] = min(int(node.get('maxLength', FREE_STRING_MAX_LENGTH)), FREE_STRING_MAX_LENGTH)
    if kinds and kinds <= {'integer', 'number'} and 'enum' not in node and 'const' not in node:
        wanted = [float(n) if '.' in n else int(n) for n in numbers]
        allowed = [v for v in wanted if kinds == {'number'} or isinstance(v, int)]
        fallback = next((node[k] for k in ('default', 'minimum') if isinstance(node.get(k), (int, float))), 1)
        node['enum'] = allowed or [fallback]
    if 'array' in kinds:
        node['maxItems'] = min(int(node.get('maxItems', MAX_ARRAY_ITEMS)), MAX_ARRAY_ITEMS)


def _ground_properties(node: dict[str, Any], words: Sequence[str], numbers: Sequence[str]) -> None:
    """Ground each property; drop optional numeric ones the question gives no number for."""
    properties = node.get('properties')
    if not isinstance(properties, dict):
        return
    required = set(node.get('required') or ())
    for name, child in list(properties.items()):
        if not isinstance(child, dict):
            continue
        if not numbers and name not in required and _is_numeric(child):
            del properties[name]
            continue
        described = f'{name} {child.get("description", "")}'
        own = words if _NUMERIC_NAME.search(described) else [w for w in words if not _NUMBER.fullmatch(w)]
        _ground(child, own, numbers)


def _ground(node: dict[str, Any], words: Sequence[str], numbers: Sequence[str]) -> None:
    kind = node.get('type')
    _ground_scalar(node, set(kind) if isinstance(kind, list) else {kind}, words, numbers)
    _ground_properties(node, words, numbers)
    children: list[Any] = []
    for key in ('$defs', 'definitions'):
        if isinstance(node.get(key), dict):
            children.extend(node[key].values())
    children.extend(node.get(key) for key in ('items', 'additionalProperties'))
    for key in ('anyOf', 'oneOf', 'allOf'):
        children.extend(node.get(key) or ())
    for child in children:
        if isinstance(child, dict):
            _ground(child, words, numbers)


def _call_schema(definition: ToolDefinition, words: Sequence[str], numbers: Sequence[str]) -> dict[str, Any]:
    """``{"name": <const>, "arguments": <grounded input schema>}``, ``$defs`` hoisted so ``#/$defs/..`` resolves."""
    arguments = ground_schema(definition.input_schema, words, numbers)
    arguments.pop('$schema', None)
    definitions = arguments.pop('$defs', None)
    schema: dict[str, Any] = {
        'type': 'object',
        'properties': {'name': {'const': definition.name}, 'arguments': arguments},
        'required': ['name', 'arguments'],
        'additionalProperties': False,
        'x-guidance': _GUIDANCE,
    }
    if definitions:
        schema['$defs'] = definitions
    return schema


def content_words(text: str) -> str:
    """``text``'s words without function words, in order: ``'What is the weather in Beijing?'`` -> ``'weather Beijing'``."""
    return ' '.join(w for w in _words(text) if w.lower() not in _STOPWORDS) or text.strip()


def call_grammar(
    definitions: Sequence[ToolDefinition], parts: Sequence[str], numbers: Sequence[str], *, whole: bool = False
) -> str:
    """A Lark grammar of ``len(parts)`` tool calls, call ``i`` grounded in ``parts[i]``'s spans.

    With ``whole``, a free string value is the part's :func:`content_words` (a search query that
    keeps every word the tool index may match, not the one the model would pick).

    Raises:
        ValueError: ``definitions`` or ``parts`` is empty.
    """
    if not definitions or not parts:
        raise ValueError('a call round needs at least one tool and one question part')
    lines = ['%llguidance {}', 'start: ' + ' '.join(f'call_{i}' for i in range(len(parts)))]
    for i, part in enumerate(parts):
        words = [content_words(part)] if whole else spans(part)
        part_numbers = [n for n in numbers if n in numbers_in([part])] or list(numbers)
        names = [f'tool_{i}_{j}' for j in range(len(definitions))]
        lines.append(f'call_{i}: "<tool_call>" ({" | ".join(names)}) "</tool_call>"')
        for name, definition in zip(names, definitions, strict=True):
            schema = orjson.dumps(_call_schema(definition, words, part_numbers)).decode()
            lines.append(f'{name}: %json {schema}')
    return '\n'.join(lines) + '\n'


ANSWER_WORDS = tuple(
    "a an the it its it's is are was were be been has have had this that these those there here and or "  # noqa: SIM905
    'but so not no yes of in on at to for from with by about as than then now today currently right also '
    'only just very more less you your i my me we our they their he she his her what which who when '
    'where how why one two three result results found returned says said gives answer done ok okay'.split()
)
"""Words any answer may use besides the conversation's own (:func:`answer_vocabulary`)."""
_WORD_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def answer_vocabulary(texts: Iterable[str]) -> list[str]:
    """The words and numbers an answer may use: :data:`ANSWER_WORDS` and those of ``texts``, each also capitalised.

    So an answer restates the conversation (question, tool results, earlier turns) in its own order,
    but cannot invent a word or a figure, nor append the stray tokens a base model writes where it
    wants to end its turn (``'... in Tokyo prochains'``).
    """
    texts = list(texts)
    found: dict[str, None] = {}
    for word in [*ANSWER_WORDS, *(w for t in texts for w in _WORD_RE.findall(t)), *numbers_in(texts)]:
        for form in (word, word[:1].upper() + word[1:], word.lower()):
            found.setdefault(form)
    return list(found)


def answer_grammar(vocabulary: Sequence[str]) -> str:
    """A Lark grammar of one sentence made of ``vocabulary`` words, ended by ``.``, ``!`` or ``?``.

    Words are separated by spaces and ``,;:``; no ``<`` (no markup), no newline, no special token.

    Raises:
        ValueError: ``vocabulary`` is empty.
    """
    if not vocabulary:
        raise ValueError('an answer needs at least one word')
    words = ' | '.join(orjson.dumps(w).decode() for w in sorted(set(vocabulary), key=lambda w: (-len(w), w)))
    return (
        '\n'.join(('%llguidance {}', 'start: WORD (GAP WORD)* END', f'WORD: {words}', 'GAP: /[ ,;:]+/', 'END: /[.!?]/'))
        + '\n'
    )


_CALL = re.compile(r'<tool_call>(.*?)</tool_call>', re.DOTALL)


_RAW_ARGUMENTS = re.compile(r'^\{"name": "(?:[^"\\]|\\.)*", "arguments": (?P<arguments>.*)\}$', re.DOTALL)


def parse_calls(text: str) -> list[tuple[str, str]]:
    """``(name, arguments JSON)`` of each ``<tool_call>`` block of ``text``, repeats dropped, in order.

    The arguments are the text the model wrote (``{"city": "Rome"}``), re-encoded only when the
    block is not in the grammar's layout. Blocks that are not a JSON object with a string ``name``
    and an object ``arguments`` are skipped.
    """
    calls: dict[tuple[str, str], str] = {}
    for block in _CALL.findall(text):
        try:
            call = orjson.loads(block)
        except orjson.JSONDecodeError:
            continue
        if isinstance(call, dict) and isinstance(call.get('name'), str) and isinstance(call.get('arguments'), dict):
            raw = _RAW_ARGUMENTS.match(block.strip())
            key = (call['name'], orjson.dumps(call['arguments']).decode())
            calls.setdefault(key, raw.group('arguments') if raw else key[1])
    return [(name, arguments) for (name, _), arguments in calls.items()]


_MARKUP = re.compile(r'<(tool_call|tool_response|tools)>.*?(?:</\1>|$)', re.DOTALL)
_SPECIAL = re.compile(r'</?(?:tool_call|tool_response|tools)>|<(?:start_of_turn|end_of_turn|eos|bos|pad|unk|mask)>')
_AFTER_TURN = re.compile(r'<(?:start_of_turn|end_of_turn)>.*', re.DOTALL)


def clean_answer(text: str) -> str:
    """``text`` without tool markup blocks, special tokens or anything after a turn marker, whitespace collapsed."""
    text = _MARKUP.sub(' ', _AFTER_TURN.sub('', text))
    return ' '.join(_SPECIAL.sub(' ', text).split())


def _values(text: str) -> set[str]:
    words = {w.lower() for w in re.findall(r'[^\W\d_]{3,}', text)} - _STOPWORDS
    return words | set(numbers_in([text]))


def mentions_results(answer: str, results: Sequence[str], question: str, earlier: Sequence[str] = ()) -> bool:
    """Whether ``answer`` restates something new of ``results`` (a number or a word of three letters or more).

    What counts, first non-empty of: the results' values found neither in ``earlier`` (the
    conversation's earlier answers: copying one does not count) nor in ``question``; those not in
    ``earlier``; those not in ``question``. ``True`` when none is left; ``False`` for an answer
    whose every value is the question's (an echo).
    """
    if _values(answer) <= _values(question):
        return False  # an echo of the question
    have = set().union(*(_values(r) for r in results)) if results else set()
    before = set().union(*(_values(e) for e in earlier)) if earlier else set()
    asked = _values(question)
    for wanted in (have - before - asked, have - before, have - asked):
        if wanted:
            return bool(wanted & _values(answer))
    return True
