"""LocalChatModel against the real embedded llama.cpp model, end to end.

The model is a 270M base model: the tests assert structure (a tool was called with arguments valid
for its schema, the result went back, the loop ended, usage was summed, the answer is clean and
restates the result), never wording. The rounds' grammars and plans are tested without a server in
tests/local/.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.local_model import (
    CALLS,
    EXAMPLES,
    assert_valid_arguments,
    convert_units,
    get_stock_quote,
    get_weather,
    needs_local,
    weather_sentence,
)
from toolweave import ChatClient
from toolweave.advisors import BaseAdvisor, ChatClientRequest, ChatClientResponse
from toolweave.chat import (
    ChatOptions,
    ChatResponse,
    Prompt,
    ToolCall,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolweave.providers import LocalChatModel, LocalModelError
from toolweave.providers.local import FALLBACK_KEY, ROUND_KEY


@dataclass
class RoundRecorder(BaseAdvisor):
    """Inside the loop: the last message each round was asked with, and each round's usage and tool calls."""

    last_messages: list[Any] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)
    tool_calls: list[tuple[ToolCall, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(order=0)

    def before(self, request: ChatClientRequest, chain: Any) -> ChatClientRequest:
        self.last_messages.append(request.prompt.messages[-1])
        return request

    def after(self, response: ChatClientResponse, chain: Any) -> ChatClientResponse:
        chat_response = response.chat_response
        if chat_response is not None:
            if chat_response.usage is not None:
                self.usages.append(chat_response.usage)
            if chat_response.has_tool_calls():
                self.tool_calls.append(chat_response.tool_calls)
        return response


def summed(usages: list[Usage]) -> tuple[int, int, int]:
    return (
        sum(u.prompt_tokens for u in usages),
        sum(u.completion_tokens for u in usages),
        sum(u.total_tokens for u in usages),
    )


# --- no server needed (the grammar, plan, prompt and reply tests are in tests/local/) ------------------


def test_missing_model_file_is_a_readable_error(tmp_path: Path) -> None:
    pytest.importorskip('xllamacpp')
    with pytest.raises(LocalModelError, match='does not exist'):
        LocalChatModel(model_path=tmp_path / 'nope.gguf').start()


# --- the real model -----------------------------------------------------------------------------------


@pytest.fixture(scope='module')
def local_model() -> Iterator[LocalChatModel]:
    with LocalChatModel(examples=EXAMPLES, max_tokens=96) as model:
        yield model


@pytest.mark.local_model
@needs_local
def test_broken_model_file_fails_to_start(tmp_path: Path) -> None:
    pytest.importorskip('xllamacpp')
    bad = tmp_path / 'broken.gguf'
    bad.write_bytes(b'GGUF' + b'\0' * 64)
    with pytest.raises(LocalModelError, match='failed to start'):
        LocalChatModel(model_path=bad, startup_timeout=30).start()


@pytest.mark.local_model
@needs_local
def test_plain_call(local_model: LocalChatModel) -> None:
    response = local_model.call(Prompt.of('The capital of France is', ChatOptions(max_tokens=8, stop=())))
    generation = response.result
    assert generation is not None
    assert generation.finish_reason in {'stop', 'length'}
    assert response.usage is not None
    assert 0 < response.usage.completion_tokens <= 8
    assert response.usage.prompt_tokens > 0
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens
    assert response.usage.native is not None
    assert local_model.base_url is not None and local_model.base_url.startswith('http://127.0.0.1:')


@pytest.mark.local_model
@needs_local
def test_tool_loop_blocking(local_model: LocalChatModel) -> None:
    CALLS.clear()
    recorder = RoundRecorder()
    client = ChatClient.builder(local_model).build()
    response = client.prompt().user('What is the weather in Tokyo?').tools(get_weather, convert_units)
    result = response.advisors(recorder).call()

    assert len(recorder.tool_calls) == 1 and len(recorder.tool_calls[0]) == 1
    call = recorder.tool_calls[0][0]
    arguments = assert_valid_arguments(call.name, call.arguments)
    assert CALLS and CALLS[0]['tool'] == call.name  # the tool really ran, with the model's arguments
    if call.name == 'get_weather':
        assert CALLS[0]['city'] == arguments['city']
    # round 2 was asked with the tool result for that very call
    assert len(recorder.last_messages) == 2
    assert isinstance(recorder.last_messages[0], UserMessage)
    tool_message = recorder.last_messages[1]
    assert isinstance(tool_message, ToolResponseMessage)
    assert [(r.id, r.name) for r in tool_message.responses] == [(call.id, call.name)]
    # the loop ended with an answer and the usage summed over both rounds
    final = result.chat_response()
    assert final is not None and not final.has_tool_calls()
    assert result.content().strip()
    assert len(recorder.usages) == 2
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens, final.usage.total_tokens) == summed(
        recorder.usages
    )


@pytest.mark.local_model
@needs_local
def test_tool_loop_streaming(local_model: LocalChatModel) -> None:
    CALLS.clear()
    recorder = RoundRecorder()
    client = ChatClient.builder(local_model).build()
    spec = client.prompt().user('How many miles is 42 km?').tools(get_weather, convert_units).advisors(recorder)

    async def run() -> tuple[str, list[Any]]:
        chunks = [chunk async for chunk in spec.stream().chat_responses()]
        return ''.join(c.text for c in chunks), chunks

    text, chunks = asyncio.run(run())
    assert len(recorder.tool_calls) == 1
    call = recorder.tool_calls[0][0]
    assert_valid_arguments(call.name, call.arguments)
    assert CALLS and CALLS[0]['tool'] == call.name
    assert isinstance(recorder.last_messages[-1], ToolResponseMessage)
    assert recorder.last_messages[-1].responses[0].id == call.id
    assert text.strip()
    assert not any(c.has_tool_calls() for c in chunks)  # tool-call chunks stay inside the loop
    assert len(recorder.usages) == 2
    final_usage = [c.usage for c in chunks if c.usage is not None][-1]
    assert (final_usage.prompt_tokens, final_usage.completion_tokens, final_usage.total_tokens) == summed(
        recorder.usages
    )


@pytest.mark.local_model
@needs_local
def test_without_examples_call_a_tool(local_model: LocalChatModel) -> None:
    recorder = RoundRecorder()
    saved = local_model.examples
    local_model.examples = ()  # no examples: the grammar alone
    try:
        client = ChatClient.builder(local_model).build()
        result = client.prompt().user('What is the weather in Rome?').tools(get_weather).advisors(recorder).call()
    finally:
        local_model.examples = saved
    assert recorder.tool_calls
    assert recorder.tool_calls[0][0].name == 'get_weather'
    assert_valid_arguments('get_weather', recorder.tool_calls[0][0].arguments)
    final = result.chat_response()
    assert final is not None and not final.has_tool_calls()
    assert_clean_answer(final, '24', 'clear')  # get_weather's '24 C, clear' for Rome


# --- a new user's tools without examples (no examples=), the three paths ---------------------------------


@pytest.fixture
def without_examples(local_model: LocalChatModel) -> Iterator[LocalChatModel]:
    """The module's server without examples."""
    saved = local_model.examples
    local_model.examples = ()
    try:
        yield local_model
    finally:
        local_model.examples = saved


def assert_one_valid_call(recorder: RoundRecorder, name: str) -> None:
    assert len(recorder.tool_calls) == 1 and len(recorder.tool_calls[0]) == 1
    call = recorder.tool_calls[0][0]
    assert call.name == name
    assert_valid_arguments(name, call.arguments)
    assert CALLS and CALLS[0]['tool'] == name  # the tool ran
    assert isinstance(recorder.last_messages[-1], ToolResponseMessage)


def assert_clean_answer(final: ChatResponse, *values: str) -> None:
    """A one-line answer without markup, from the model or (flagged) the tool's own words, naming one of ``values``."""
    text = final.text
    assert text.strip() and '<' not in text and '\n' not in text, text
    assert not values or any(v.lower() in text.lower() for v in values), (text, values)
    assert final.result is not None and final.result.metadata[ROUND_KEY] == 'answer'
    if FALLBACK_KEY in final.result.metadata:
        assert final.result.metadata[FALLBACK_KEY] is True


@pytest.mark.local_model
@needs_local
@pytest.mark.parametrize(
    ('function', 'name', 'question'),
    [
        (weather_sentence, 'get_weather', 'What is the weather in Paris?'),  # returns a sentence
        (get_stock_quote, 'get_stock_quote', 'What is the price of AAPL?'),  # a JSON object
    ],
)
def test_without_examples_answer_blocking(
    without_examples: LocalChatModel, function: Any, name: str, question: str
) -> None:
    CALLS.clear()
    recorder = RoundRecorder()
    client = ChatClient.builder(without_examples).default_system('Answer briefly.').build()
    result = client.prompt(question).tools(function).advisors(recorder).call()
    assert_one_valid_call(recorder, name)
    final = result.chat_response()
    assert final is not None and not final.has_tool_calls()
    assert_clean_answer(final)
    assert len(recorder.usages) == 2 and final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens, final.usage.total_tokens) == summed(
        recorder.usages
    )


@pytest.mark.local_model
@needs_local
def test_without_examples_answer_async(without_examples: LocalChatModel) -> None:
    CALLS.clear()
    recorder = RoundRecorder()
    client = ChatClient.builder(without_examples).default_system('Answer briefly.').build()
    result = asyncio.run(client.prompt('Weather in Oslo?').tools(weather_sentence).advisors(recorder).acall())
    assert_one_valid_call(recorder, 'get_weather')
    final = result.chat_response()
    assert final is not None and not final.has_tool_calls()
    assert_clean_answer(final, 'Oslo')


@pytest.mark.local_model
@needs_local
def test_without_examples_answer_streaming(without_examples: LocalChatModel) -> None:
    CALLS.clear()
    recorder = RoundRecorder()
    client = ChatClient.builder(without_examples).default_system('Answer briefly.').build()
    spec = client.prompt('What is the weather in Tokyo?').tools(weather_sentence).advisors(recorder)

    async def run() -> tuple[str, list[ChatResponse]]:
        content = ''.join([piece async for piece in spec.stream().content()])
        chunks = [chunk async for chunk in spec.stream().chat_responses()]
        return content, chunks

    content, chunks = asyncio.run(run())
    assert content.strip() and '<' not in content
    assert ''.join(c.text for c in chunks) == content  # same request, same deterministic answer
    assert len(recorder.tool_calls) == 2  # one call per streamed loop
    recorder.tool_calls = recorder.tool_calls[1:]
    assert_one_valid_call(recorder, 'get_weather')


@pytest.mark.local_model
@needs_local
def test_close_stops_the_server() -> None:
    model = LocalChatModel(max_tokens=4)
    model.start()
    base_url = model.base_url
    assert base_url is not None and model.running
    assert httpx.get(base_url.removesuffix('/v1') + '/health', timeout=5).status_code == 200
    model.close()
    assert not model.running and model.base_url is None
    with pytest.raises(httpx.ConnectError):
        httpx.get(base_url.removesuffix('/v1') + '/health', timeout=5)
    model.close()  # idempotent
