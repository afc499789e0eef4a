"""Helpers for the provider tests: the replay server fixture, the model factory, stream collection, expectations."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolweave import providers
from toolweave.chat import ChatResponse, Prompt
from toolweave.chat.model import ChatModel
from toolweave.providers._base import HttpChatModel
from toolweave.providers.replay import ReplayServer

DATA = Path(__file__).parents[1] / 'data'
RECORDED = DATA / 'recorded'


PROVIDER_MODELS = {
    'openai': 'OpenAIChatModel',
    'responses': 'OpenAIResponsesModel',
    'anthropic': 'AnthropicChatModel',
    'gemini': 'GeminiChatModel',
    'ollama': 'OllamaChatModel',
}
"""Provider name -> model class name in ``toolweave.providers``."""


def build_model(provider: str, url: str, key: str | None = 'k', model: str = 'm', **kwargs: Any) -> HttpChatModel:
    """The one model factory of the tests: a model of ``provider`` (a ``PROVIDER_MODELS`` key) at ``url``.

    ``key`` is the API key (``None``: the environment's), ``kwargs`` the model's other settings.
    """
    cls = getattr(providers, PROVIDER_MODELS[provider])
    built: HttpChatModel = cls(base_url=url, api_key=key, model=model, **kwargs)
    return built


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    """A started loopback replay server, stopped after the test."""
    with ReplayServer() as s:
        yield s


def collect(model: ChatModel, prompt: Prompt) -> list[ChatResponse]:
    """Every chunk of ``model.stream(prompt)``."""

    async def run() -> list[ChatResponse]:
        return [chunk async for chunk in model.stream(prompt)]

    return asyncio.run(run())


def collect_until_error(model: ChatModel, prompt: Prompt) -> tuple[list[ChatResponse], BaseException | None]:
    """The chunks yielded before the stream raised, and the error (``None`` when it ended normally)."""
    seen: list[ChatResponse] = []

    async def run() -> None:
        async for chunk in model.stream(prompt):
            seen.append(chunk)

    try:
        asyncio.run(run())
    except Exception as exc:  # noqa: BLE001 - returned to the test, which asserts its type
        return seen, exc
    return seen, None


def recorded(name: str) -> bytes:
    """A body from tests/data/recorded."""
    return (RECORDED / name).read_bytes()


def check_stream_against_expected(chunks: list[ChatResponse], want: dict[str, Any], final_reason: str) -> None:
    """The chunks of a corpus stream against its ``.expected.json``."""
    *deltas, final = chunks
    assert all(not c.has_tool_calls() for c in deltas)
    assert ''.join(c.text for c in deltas) == want['text']
    reasoning = ''.join(c.generations[0].output.metadata.get('reasoning', '') for c in deltas)
    assert reasoning == (want['reasoning'] or '')
    assert final.text == ''
    got = [(c.name, json.loads(c.arguments or '{}')) for c in final.tool_calls]
    assert got == [(c['name'], c['arguments']) for c in want['tool_calls']]
    for call, expected_call in zip(final.tool_calls, want['tool_calls'], strict=True):
        if expected_call['id'] is not None:
            assert call.id == expected_call['id']
        else:
            assert call.id
    assert final.generations[0].finish_reason == final_reason
    assert final.metadata['native_finish_reason'] == want['finish_reason']
    assert final.id == want['response_id']
    assert final.model == want['model']
    assert final.usage is not None and final.usage.native == want['usage']
