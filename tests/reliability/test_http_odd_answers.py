"""Odd answers get typed errors: redirects, 2xx bodies that are not an answer, bodies that are not JSON.

A redirect is a ProviderRedirectError naming the Location (never followed, never a ServerError, not
retried); a 2xx JSON object without the provider's answer field (``choices``, ``content``,
``candidates``, ``output``, ``message``) is a ResponseFormatError, not an empty answer; so is a 2xx
body that is not JSON or not an object.
"""

from __future__ import annotations

import json

import pytest
from http_faults import ANSWERS, PROVIDERS, Conn, FaultServer, Request, build_model, response_head, run
from toolweave.exceptions import (
    BadRequestError,
    ProviderError,
    ProviderRedirectError,
    ResponseFormatError,
    ServerError,
)

MODES = ('call', 'acall', 'stream')
FIELDS = {
    'openai': 'choices',
    'responses': 'output',
    'anthropic': 'content',
    'gemini': 'candidates',
    'ollama': 'message',
}


def answering(status: int, body: bytes, headers: dict[str, str] | None = None):
    def behaviour(conn: Conn, request: Request | None) -> None:
        conn.send(response_head(status, headers, length=len(body)) + body)

    return behaviour


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('status', [301, 302, 303, 307, 308])
def test_a_redirect_is_typed_and_not_followed(status: int, mode: str) -> None:
    location = 'http://127.0.0.1:9/moved/v1/chat/completions'
    with FaultServer(answering(status, b'moved', {'Location': location})) as server:
        model = build_model('openai', server.url)
        with pytest.raises(ProviderRedirectError) as info:
            run(model, mode)
        model.close()
        assert len(server.requests) == 1  # neither followed nor retried
    error = info.value
    assert not isinstance(error, ServerError | BadRequestError)
    assert (error.status_code, error.location) == (status, location)
    assert location in str(error) and 'not followed' in str(error)


def test_a_redirect_without_location() -> None:
    with FaultServer(answering(302, b'')) as server:
        model = build_model('openai', server.url)
        with pytest.raises(ProviderRedirectError) as info:
            run(model, 'call')
        model.close()
    assert info.value.location is None and 'without a Location' in str(info.value)


@pytest.mark.parametrize('mode', ['call', 'acall'])
@pytest.mark.parametrize('provider', PROVIDERS)
def test_a_2xx_body_without_the_answer_field(provider: str, mode: str) -> None:
    body = json.dumps({'id': 'x', 'model': 'm', 'usage': {'total_tokens': 1}}).encode()
    with FaultServer(answering(200, body)) as server:
        model = build_model(provider, server.url)
        with pytest.raises(ResponseFormatError) as info:
            run(model, mode)
        model.close()
    assert f"no '{FIELDS[provider]}'" in str(info.value)
    assert info.value.status_code == 200 and info.value.body == body.decode()


@pytest.mark.parametrize('provider', PROVIDERS)
def test_a_wrongly_typed_answer_field(provider: str) -> None:
    body = json.dumps({FIELDS[provider]: 'text instead of a structure'}).encode()
    with FaultServer(answering(200, body)) as server:
        model = build_model(provider, server.url)
        with pytest.raises(ResponseFormatError, match=f"answered HTTP 200 with no '{FIELDS[provider]}' an "):
            run(model, 'call')
        model.close()


@pytest.mark.parametrize('body', [b'<html>gateway</html>', b'', b'[1, 2]', b'"text"', b'{"choices": [1'])
@pytest.mark.parametrize('provider', PROVIDERS)
def test_a_2xx_body_that_is_not_a_json_object(provider: str, body: bytes) -> None:
    with FaultServer(answering(200, body)) as server:
        model = build_model(provider, server.url)
        with pytest.raises(ResponseFormatError) as info:
            run(model, 'call')
        model.close()
    what = 'JSON that is not an object' if body in (b'[1, 2]', b'"text"') else 'a body that is not JSON'
    assert f' answered HTTP 200 with {what}' in str(info.value)
    assert (info.value.status_code, info.value.body) == (200, body.decode())


@pytest.mark.parametrize('provider', PROVIDERS)
def test_real_answers_still_parse(provider: str) -> None:
    with FaultServer(answering(200, ANSWERS[provider])) as server:
        model = build_model(provider, server.url)
        assert run(model, 'call').text == 'hi'
        model.close()


def test_openai_empty_choices_and_gemini_blocked_prompt_are_answers() -> None:
    with FaultServer(answering(200, b'{"id": "c", "choices": []}')) as server:
        model = build_model('openai', server.url)
        assert run(model, 'call').generations == ()
        model.close()
    blocked = b'{"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": "g"}'
    with FaultServer(answering(200, blocked)) as server:
        model = build_model('gemini', server.url)
        response = run(model, 'call')
        model.close()
    assert response.text == '' and response.generations[0].finish_reason == 'content_filter'
    assert response.metadata['native_finish_reason'] == 'SAFETY'


def test_an_error_object_in_a_2xx_body_is_still_a_provider_error() -> None:
    with FaultServer(answering(200, b'{"error": {"message": "model overloaded"}}')) as server:
        model = build_model('ollama', server.url)
        with pytest.raises(ProviderError, match='model overloaded') as info:
            run(model, 'call')
        model.close()
    assert not isinstance(info.value, ResponseFormatError)


def test_new_errors_keep_their_fields_through_pickle() -> None:
    import pickle

    from toolweave.exceptions import ResponseTooLargeError

    redirect = ProviderRedirectError('moved', status_code=308, provider='openai')
    redirect.location = 'https://new.example/v1'
    too_large = ResponseTooLargeError('too large', status_code=200, provider='openai')
    too_large.limit = 1024
    copies = [pickle.loads(pickle.dumps(e)) for e in (redirect, too_large)]
    assert (type(copies[0]), copies[0].location, copies[0].status_code) == (
        ProviderRedirectError,
        redirect.location,
        308,
    )
    assert (type(copies[1]), copies[1].limit, str(copies[1])) == (ResponseTooLargeError, 1024, 'too large')
