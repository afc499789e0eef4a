"""Generated provider streams for the benchmarks: openai-chat and anthropic, three shapes each.

- ``text``: a 400-token text answer;
- ``tools``: three parallel tool calls in about 600 chunks, with CJK text in the arguments;
- ``big``: one 200 KB tool call in about 35,000 chunks.

Each generator returns ``(body, payloads)``: the raw SSE body and the JSON ``data:`` payloads.
"""

from __future__ import annotations

import json
import random
from typing import Any

WORDS = [
    'the',
    'quick',
    'brown',
    'fox',
    'jumps',
    'over',
    'a',
    'lazy',
    'dog',
    'while',
    '東京',
    'and',
    'Paris',
    'wait',
    'for',
    'rain',
    ',',
    '.',
    '!',
    '?',
]
CJK_ARGS = [
    (
        'search_docs',
        {'query': '東京都の天気予報と週末のイベント情報' * 10, 'lang': 'ja', 'limit': 10, 'tags': ['天気', '旅行']},
    ),
    ('translate', {'text': '我们明天上午十点在会议室见面，请准时参加。' * 10, 'source': 'zh', 'target': 'en'}),
    (
        'create_note',
        {'title': '회의록 – 3분기 계획', 'body': '다음 주 화요일까지 보고서를 제출하세요.' * 10, 'pinned': True},
    ),
]


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(',', ':')).encode()


def _split(text: str, pieces: int) -> list[str]:
    n = len(text)
    pieces = min(pieces, n)
    return [text[i * n // pieces : (i + 1) * n // pieces] for i in range(pieces)]


def _big_args(size: int = 200_000) -> str:
    rng = random.Random(3)
    rows = []
    while sum(len(r) for r in rows) < size:
        rows.append(json.dumps({'id': len(rows), 'name': ' '.join(rng.choices(WORDS, k=6)), 'ok': rng.random() < 0.5}))
    return '{"rows": [' + ','.join(rows) + ']}'


def _text_tokens(n: int = 400) -> list[str]:
    rng = random.Random(5)
    return [(' ' if i else '') + rng.choice(WORDS) for i in range(n)]


def _calls(shape: str) -> list[tuple[str, list[str]]]:
    if shape == 'tools':
        per_call = 197
        return [(name, _split(json.dumps(args, ensure_ascii=False), per_call)) for name, args in CJK_ARGS]
    big = _big_args()
    return [('bulk_insert', [big[i : i + 6] for i in range(0, len(big), 6)])]


def openai_stream(shape: str) -> tuple[bytes, list[bytes]]:
    """A gpt-4o style chat-completions stream of ``shape`` (``text``, ``tools`` or ``big``)."""
    head = {'id': 'chatcmpl-bench', 'object': 'chat.completion.chunk', 'created': 1754693439, 'model': 'gpt-4o'}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, 'choices': [{'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish}]}

    payloads = [chunk({'role': 'assistant', 'content': ''})]
    if shape == 'text':
        payloads += [chunk({'content': t}) for t in _text_tokens()]
        finish = 'stop'
    else:
        for index, (name, pieces) in enumerate(_calls(shape)):
            first = {
                'index': index,
                'id': f'call_{index}',
                'type': 'function',
                'function': {'name': name, 'arguments': ''},
            }
            payloads.append(chunk({'tool_calls': [first]}))
            payloads += [chunk({'tool_calls': [{'index': index, 'function': {'arguments': p}}]}) for p in pieces]
        finish = 'tool_calls'
    payloads.append(chunk({}, finish))
    payloads.append(
        {**head, 'choices': [], 'usage': {'prompt_tokens': 50, 'completion_tokens': 400, 'total_tokens': 450}}
    )
    raw = [_dumps(p) for p in payloads]
    return b''.join(b'data: ' + r + b'\n\n' for r in raw) + b'data: [DONE]\n\n', raw


def anthropic_stream(shape: str) -> tuple[bytes, list[bytes]]:
    """A Claude Messages API stream of ``shape`` (``text``, ``tools`` or ``big``)."""
    events: list[dict[str, Any]] = [
        {
            'type': 'message_start',
            'message': {
                'id': 'msg_bench',
                'type': 'message',
                'role': 'assistant',
                'model': 'claude-sonnet-4-5',
                'content': [],
                'stop_reason': None,
                'stop_sequence': None,
                'usage': {'input_tokens': 50, 'output_tokens': 1},
            },
        }
    ]
    if shape == 'text':
        events.append({'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}})
        events += [
            {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': t}}
            for t in _text_tokens()
        ]
        events.append({'type': 'content_block_stop', 'index': 0})
        stop = 'end_turn'
    else:
        for index, (name, pieces) in enumerate(_calls(shape)):
            block = {'type': 'tool_use', 'id': f'toolu_{index}', 'name': name, 'input': {}}
            events.append({'type': 'content_block_start', 'index': index, 'content_block': block})
            events += [
                {
                    'type': 'content_block_delta',
                    'index': index,
                    'delta': {'type': 'input_json_delta', 'partial_json': p},
                }
                for p in pieces
            ]
            events.append({'type': 'content_block_stop', 'index': index})
        stop = 'tool_use'
    events.append(
        {
            'type': 'message_delta',
            'delta': {'stop_reason': stop, 'stop_sequence': None},
            'usage': {'output_tokens': 400},
        }
    )
    events.append({'type': 'message_stop'})
    raw = [_dumps(e) for e in events]
    body = b''.join(
        b'event: ' + e['type'].encode() + b'\ndata: ' + r + b'\n\n' for e, r in zip(events, raw, strict=True)
    )
    return body, raw


def partial_fragments() -> list[str]:
    """A 359-fragment, about 1.9 KB tool argument (the size the issue quotes for jiter's re-parsing cost)."""
    rng = random.Random(11)
    doc = {
        'title': 'Quarterly planning – 東京 offsite',
        'attendees': [{'name': ' '.join(rng.choices(WORDS, k=2)), 'email': f'user{i}@example.com'} for i in range(24)],
        'agenda': [' '.join(rng.choices(WORDS, k=8)) for _ in range(16)],
        'budget': {'amount': 12500.5, 'currency': 'EUR', 'approved': False},
    }
    text = json.dumps(doc, ensure_ascii=False)
    return _split(text, 359)
