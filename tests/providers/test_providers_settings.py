"""Connection settings as one object (HttpSettings) and the early error for a missing API key (issues #19, #20)."""

from __future__ import annotations

import httpx
import pytest
from toolweave.chat import Prompt
from toolweave.exceptions import MissingApiKeyError
from toolweave.providers import (
    AnthropicChatModel,
    GeminiChatModel,
    HttpSettings,
    OllamaChatModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    RetryPolicy,
    Timeouts,
)
from toolweave.providers._base import HttpChatModel
from toolweave.providers.replay import ReplayServer, Reply

HOSTED = [
    pytest.param(OpenAIChatModel, ('OPENAI_API_KEY',), id='openai'),
    pytest.param(OpenAIResponsesModel, ('OPENAI_API_KEY',), id='responses'),
    pytest.param(AnthropicChatModel, ('ANTHROPIC_API_KEY',), id='anthropic'),
    pytest.param(GeminiChatModel, ('GEMINI_API_KEY', 'GOOGLE_API_KEY'), id='gemini'),
]
ALL_ENV = ('OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'OLLAMA_API_KEY')


@pytest.fixture(autouse=True)
def no_keys_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ALL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(('cls', 'env'), HOSTED)
def test_no_key_for_the_providers_own_api_fails_when_built(cls: type[HttpChatModel], env: tuple[str, ...]) -> None:
    with pytest.raises(MissingApiKeyError) as caught:
        cls(model='m')
    message = str(caught.value)
    assert message.startswith(f'{cls.__name__} needs an API key for {cls.default_base_url}')
    assert ' or '.join(env) in message
    assert "api_key=''" in message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(('cls', 'env'), HOSTED)
def test_a_key_from_the_environment_or_the_argument_is_enough(
    cls: type[HttpChatModel], env: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cls(model='m', api_key='k1')._api_key == 'k1'
    monkeypatch.setenv(env[-1], 'k2')
    assert cls(model='m')._api_key == 'k2'


def test_a_local_openai_compatible_server_needs_no_key() -> None:
    """README: any OpenAI-compatible server at another base_url; api_key='' says "no key" anywhere."""
    with ReplayServer() as server:
        completion = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}'
        server.queue(Reply(body=completion), Reply(body=completion))
        for model in (
            OpenAIChatModel(base_url=server.url + '/v1', model='qwen'),
            OpenAIChatModel(base_url=server.url + '/v1', api_key='', model='qwen'),
        ):
            with model:
                assert model.call(Prompt.of('hello')).text == 'hi'
        assert [r.headers.get('Authorization') for r in server.requests] == [None, None]
    hosted = OpenAIChatModel(api_key='', model='gpt-4o-mini')  # explicitly none, even for the hosted API
    assert 'Authorization' not in hosted.headers(False)


def test_ollama_needs_no_key() -> None:
    assert 'Authorization' not in OllamaChatModel(model='llama3.2').headers(False)


def test_one_settings_object_configures_every_provider() -> None:
    with httpx.Client() as borrowed:
        settings = HttpSettings(
            base_url='http://127.0.0.1:9/v1',
            api_key='sk-secret-value',
            timeout=Timeouts(connect=2, read=5, total=30),
            retry=RetryPolicy(max_retries=0),
            extra_headers={'X-Team': 'a'},
            http_client=borrowed,
            max_response_bytes=1024,
        )
        for cls in (OpenAIChatModel, OpenAIResponsesModel, AnthropicChatModel, GeminiChatModel, OllamaChatModel):
            model = cls(model='m', settings=settings)
            transport = model.transport
            assert model.base_url == 'http://127.0.0.1:9/v1'
            assert model._api_key == 'sk-secret-value'
            assert (transport.timeouts.read, transport.timeouts.total) == (5, 30)
            assert (transport.retry.max_retries, transport.max_response_bytes) == (0, 1024)
            assert transport._client is borrowed
            assert model.headers(False)['X-Team'] == 'a'
            assert model.settings == settings  # the settings it was built with, as given
    assert 'sk-secret' not in repr(settings)


def test_keywords_win_over_the_settings_object_and_keep_the_old_calls_working() -> None:
    settings = HttpSettings(base_url='http://a.example/v1', api_key='k', timeout=3)
    model = OpenAIChatModel(model='m', settings=settings, base_url='http://b.example/v1', retry=RetryPolicy(1))
    assert model.base_url == 'http://b.example/v1'
    assert (model.transport.timeouts.connect, model.transport.retry.max_retries) == (3, 1)
    old_style = AnthropicChatModel(
        base_url='http://c.example', api_key='k', model='c', timeout=4.0, max_tokens=10, max_response_bytes=99
    )
    assert (old_style.max_tokens, old_style.transport.timeouts.read, old_style.transport.max_response_bytes) == (
        10,
        4.0,
        99,
    )


def test_an_unknown_setting_is_a_type_error() -> None:
    with pytest.raises(TypeError, match='base_uri'):
        OpenAIChatModel(model='m', api_key='k', base_uri='http://x')  # type: ignore[call-arg]
