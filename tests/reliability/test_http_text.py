"""Request bodies never fail on lone surrogates: message text, tool-call arguments and tool results.

A tool that lists a directory holding a file name that is not UTF-8 returns ``'\\udcff'``-style
escapes; a model's arguments may carry a ``\\udcff`` JSON escape. Every provider class must still send
its request, with U+FFFD in place of each lone surrogate and the rest of the value intact.
"""

from __future__ import annotations

import json

import pytest
from http_faults import (
    ANSWERS,
    PROVIDERS,
    STREAM_START,
    STREAM_TEXT_EVENT,
    Conn,
    FaultServer,
    Request,
    build_model,
    response_head,
    run,
    stream_head,
)
from toolweave.chat import Prompt
from toolweave.chat.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.providers._http import encode_json

BAD = 'caf\udce9'  # 'café' listed from a Latin-1 file name with surrogateescape
PROMPT = Prompt.of(
    [
        SystemMessage(f'system {BAD}'),
        UserMessage(f'list {BAD}'),
        AssistantMessage(
            f'calling {BAD}',
            (
                ToolCall('c1', 'function', 'ls', json.dumps({'path': BAD}, ensure_ascii=False)),
                ToolCall('c2', 'function', 'ls', '{"path": "\\udce9 escaped"}'),
            ),
        ),
        ToolResponseMessage((ToolResponse('c1', 'ls', f'{BAD}.txt'), ToolResponse('c2', 'ls', json.dumps({'f': BAD})))),
    ]
)


def answer_for(provider: str, mode: str):
    def behaviour(conn: Conn, request: Request | None) -> None:
        if mode == 'stream':
            conn.send(stream_head(provider) + STREAM_START.get(provider, b'') + STREAM_TEXT_EVENT[provider])
        else:
            conn.send(response_head(length=len(ANSWERS[provider])) + ANSWERS[provider])

    return behaviour


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings(k), *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream'])
@pytest.mark.parametrize('provider', PROVIDERS)
def test_lone_surrogates_are_sent_as_replacement_characters(provider: str, mode: str) -> None:
    with FaultServer(answer_for(provider, mode)) as server:
        model = build_model(provider, server.url)
        try:
            run(model, mode, PROMPT)
        except Exception as error:  # noqa: BLE001 - only the request body is under test
            assert 'surrogate' not in str(error) and 'UTF-8' not in str(error), error
        model.close()
        sent = server.requests[0].body
    sent.decode('utf-8')  # valid UTF-8
    texts = ' '.join(strings(json.loads(sent)))
    assert 'caf\ufffd' in texts  # message text, arguments and results kept, with U+FFFD
    for piece in ('system caf', 'list caf', '.txt'):
        assert piece in texts
    if provider in ('anthropic', 'gemini', 'ollama'):  # arguments parsed into objects: both calls kept
        assert texts.count('\ufffd escaped') == 1


def test_encode_json_is_the_fast_path_for_valid_text() -> None:
    body = {'messages': [{'content': 'plain ✓'}]}
    assert encode_json(body) == json.dumps(body, ensure_ascii=False, separators=(',', ':')).encode()
    assert encode_json({'k\udcff': ['v\ud800', ('t\udfff',)]}) == '{"k\ufffd":["v\ufffd",["t\ufffd"]]}'.encode()
    with pytest.raises(TypeError, match='not JSON serializable: object'):
        encode_json({'x': object()})
