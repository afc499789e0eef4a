"""Fault tests shared by GeminiChatModel and OpenAIResponsesModel: a stream that stalls, an event that is not JSON."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.provider_fixtures import collect_until_error, recorded
from toolweave.chat import Prompt
from toolweave.exceptions import ProviderTimeoutError, ResponseFormatError
from toolweave.providers import GeminiChatModel, OpenAIResponsesModel, RetryPolicy, Timeouts
from toolweave.providers._base import HttpChatModel
from toolweave.providers.replay import ReplayServer, Reply

Factory = Callable[[str], HttpChatModel]
NO_RETRY = RetryPolicy(max_retries=0)
STALL = Timeouts(connect=5, read=0.3)


def gemini(url: str) -> HttpChatModel:
    return GeminiChatModel(base_url=url, api_key='k', model='gemini-2.5-flash', timeout=STALL, retry=NO_RETRY)


def responses(url: str) -> HttpChatModel:
    return OpenAIResponsesModel(base_url=url, api_key='k', model='gpt-5-mini', timeout=STALL, retry=NO_RETRY)


# (factory, recorded answer stream, text of its first event(s) that carry text, bytes of those events)
CASES = [
    pytest.param(gemini, 'gemini-answer.sse', 'It is 18 C', 1, id='gemini'),
    pytest.param(responses, 'responses-answer.sse', 'It is 18 C', 3, id='responses'),
]


def events(body: bytes, n: int) -> bytes:
    """The first ``n`` events of an SSE body."""
    end = 0
    for _ in range(n):
        end = body.index(b'\n\n', end) + 2
    return body[:end]


@pytest.mark.parametrize(('factory', 'name', 'text', 'n'), CASES)
def test_stream_that_stalls_is_a_read_timeout(
    server: ReplayServer, factory: Factory, name: str, text: str, n: int
) -> None:
    body = recorded(name)
    server.queue(Reply(body=body, content_type='text/event-stream', hang_after=len(events(body, n))))
    seen, error = collect_until_error(factory(server.url), Prompt.of('hi'))
    assert isinstance(error, ProviderTimeoutError)
    assert ''.join(c.text for c in seen) == error.partial_text == text
    assert len(server.requests) == 1


@pytest.mark.parametrize(('factory', 'name', 'text', 'n'), CASES)
def test_event_that_is_not_json(server: ReplayServer, factory: Factory, name: str, text: str, n: int) -> None:
    body = recorded(name)
    server.queue(Reply(body=events(body, n) + b'data: {"candidates": [\n\n', content_type='text/event-stream'))
    seen, error = collect_until_error(factory(server.url), Prompt.of('hi'))
    assert isinstance(error, ResponseFormatError)
    assert 'malformed stream' in str(error)
    assert ''.join(c.text for c in seen) == error.partial_text == text
