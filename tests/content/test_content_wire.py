"""Wire snapshots: each provider's real request (sent to the replay server) for every part kind and strategy.

Each case sends one prompt through the provider's HTTP path to a loopback :class:`ReplayServer` and compares
the JSON body received with ``tests/data/content_snapshots/<provider>__<case>.json``. A part or strategy a
provider cannot take must raise its typed error before anything is sent (the snapshot records the error).
``TOOLWEAVE_UPDATE_SNAPSHOTS=1`` writes missing snapshots (review them before committing).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from parts import AUDIO, IMAGE, IMAGE_URL, PDF_DOC, PDF_URL
from pydantic import BaseModel
from support.provider_fixtures import recorded
from toolweave.chat import (
    AssistantMessage,
    Media,
    Prompt,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    UnsupportedContentError,
    UserMessage,
)
from toolweave.chat.options import NativeOutputUnsupportedError
from toolweave.providers import (
    AnthropicChatModel,
    GeminiChatModel,
    OllamaChatModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
)
from toolweave.providers.replay import ReplayServer, Reply
from toolweave.structured import OutputType, prepare
from toolweave.tools import MethodToolCallback, tool

SNAPSHOTS = Path(__file__).parents[1] / 'data' / 'content_snapshots'
OPENAI_ANSWER = b'{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}'


def _openai(url: str) -> Any:
    return OpenAIChatModel(base_url=url, api_key='sk-test', model='gpt-4o-mini')


PROVIDERS: dict[str, tuple[Callable[[str], Any], bytes]] = {
    'openai': (_openai, OPENAI_ANSWER),
    'openai_text_only': (lambda url: OpenAIChatModel(base_url=url, api_key='k', model='gpt-3.5-turbo'), OPENAI_ANSWER),
    'responses': (
        lambda url: OpenAIResponsesModel(base_url=url, api_key='k', model='gpt-4.1'),
        recorded('responses-answer.json'),
    ),
    'anthropic': (
        lambda url: AnthropicChatModel(base_url=url, api_key='k', model='claude-sonnet-4-5'),
        recorded('anthropic-answer.json'),
    ),
    'gemini': (
        lambda url: GeminiChatModel(base_url=url, api_key='k', model='gemini-2.5-flash'),
        recorded('gemini-answer.json'),
    ),
    'ollama': (lambda url: OllamaChatModel(base_url=url, model='llama3.2'), recorded('ollama-answer.json')),
}


class Invoice(BaseModel):
    number: str
    total: float
    lines: list[str]


@tool
def lookup(number: str) -> str:
    """Look an invoice up."""
    return number


def _user(*media: Media) -> Prompt:
    return Prompt((UserMessage('Describe this.', media=media),))


def _tool_result(*media: Media) -> Prompt:
    call = ToolCall('call_1', 'function', 'render', '{"what": "chart"}')
    return Prompt(
        (
            UserMessage('Render the chart.'),
            AssistantMessage(None, (call,)),
            ToolResponseMessage((ToolResponse('call_1', 'render', 'rendered', media=media),)),
        )
    )


def _strategy(strategy: str) -> Prompt:
    options = ToolCallingChatOptions(tool_callbacks=(MethodToolCallback(lookup),))
    prompt = Prompt((UserMessage('Invoice 7, please.'),), options)
    return prepare(prompt, OutputType.of(Invoice), strategy)  # type: ignore[arg-type]


CASES: dict[str, Callable[[], Prompt]] = {
    'user_image': lambda: _user(IMAGE),
    'user_image_url': lambda: _user(IMAGE_URL),
    'user_image_without_text': lambda: Prompt((UserMessage('', media=(IMAGE,)),)),
    'user_pdf': lambda: _user(PDF_DOC),
    'user_pdf_url': lambda: _user(PDF_URL),
    'user_audio': lambda: _user(AUDIO),
    'tool_image': lambda: _tool_result(IMAGE),
    'tool_pdf': lambda: _tool_result(PDF_DOC),
    'tool_image_and_pdf': lambda: _tool_result(IMAGE, PDF_DOC),
    'strategy_native': lambda: _strategy('native'),
    'strategy_tool': lambda: _strategy('tool'),
    'strategy_prompted': lambda: _strategy('prompted'),
}


def _send(provider: str, prompt: Prompt) -> Any:
    make, answer = PROVIDERS[provider]
    with ReplayServer() as server:
        server.queue(Reply(body=answer))
        with make(server.url) as model:
            try:
                model.call(prompt)
            except (UnsupportedContentError, NativeOutputUnsupportedError) as error:
                assert server.requests == []  # raised before anything was sent
                return {'error': type(error).__name__, 'message': str(error)}
        return server.requests[-1].json


@pytest.mark.parametrize('case', sorted(CASES))
@pytest.mark.parametrize('provider', sorted(PROVIDERS))
def test_request_snapshot(provider: str, case: str) -> None:
    sent = _send(provider, CASES[case]())
    path = SNAPSHOTS / f'{provider}__{case}.json'
    if not path.exists() and os.environ.get('TOOLWEAVE_UPDATE_SNAPSHOTS') == '1':
        path.write_text(json.dumps(sent, indent=1, sort_keys=True) + '\n')
    assert sent == json.loads(path.read_text())
