from __future__ import annotations

import asyncio

import pytest
from toolweave.chat import ChatModel, ChatResponse, Prompt, ToolCall, ToolResponse, ToolResponseMessage, Usage
from toolweave.chat.stream import ChatResponseAggregator
from toolweave.providers import ScriptedChatModel, ScriptExhaustedError


def stream(model: ChatModel, prompt: Prompt) -> list[ChatResponse]:
    async def run() -> list[ChatResponse]:
        return [chunk async for chunk in model.stream(prompt)]

    return asyncio.run(run())


def test_answers_every_chat_model_entry_point() -> None:
    # mypy proves the method shapes (README quick start); this checks that each entry point answers the next step.
    model: ChatModel = ScriptedChatModel([ScriptedChatModel.text_response(t) for t in ('one', 'two', 'three')])
    assert model.call(Prompt.of('1')).text == 'one'
    assert asyncio.run(model.acall(Prompt.of('2'))).text == 'two'
    assert ''.join(chunk.text for chunk in stream(model, Prompt.of('3'))) == 'three'


def test_returns_script_in_order_and_records_prompts() -> None:
    first = ScriptedChatModel.tool_call_response('get_weather', {'city': 'Paris'}, id='call_1')
    second = ScriptedChatModel.text_response('It is 18 C.', usage=ScriptedChatModel.usage(20, 5))
    model = ScriptedChatModel([first, second])
    p1, p2 = Prompt.of('weather?'), Prompt.of('again')
    assert model.call(p1) is first
    assert asyncio.run(model.acall(p2)) is second
    assert model.prompts == [p1, p2]
    assert model.remaining == 0


def test_exhausted_script_raises_clearly() -> None:
    model = ScriptedChatModel([ScriptedChatModel.text_response('only one')])
    model.call(Prompt.of('a'))
    with pytest.raises(ScriptExhaustedError, match='request 2 arrived but the script has only 1 response'):
        model.call(Prompt.of('b'))
    assert len(model.prompts) == 2
    with pytest.raises(ScriptExhaustedError, match=r'request 3 arrived .* last message: UserMessage\(text=.c.'):
        stream(model, Prompt.of('c'))


def test_callable_step_sees_the_prompt() -> None:
    def answer(prompt: Prompt) -> ChatResponse:
        last = prompt.messages[-1]
        assert isinstance(last, ToolResponseMessage)
        return ScriptedChatModel.text_response(f'It is {last.responses[0].response_data}.')

    model = ScriptedChatModel([answer])
    prompt = Prompt((ToolResponseMessage((ToolResponse('c1', 'get_weather', '18 C'),)),))
    assert model.call(prompt).text == 'It is 18 C.'


def test_callable_step_must_return_a_chat_response() -> None:
    model = ScriptedChatModel([lambda prompt: 'nope'])  # type: ignore[list-item,arg-type,return-value]
    with pytest.raises(TypeError, match='produced str, not a ChatResponse'):
        model.call(Prompt.of('x'))


def test_tool_call_response_helper() -> None:
    response = ScriptedChatModel.tool_call_response(
        'get_weather', {'city': 'Paris', 'unit': 'c'}, id='call_9', more=[('convert', '{"value": 1')]
    )
    first, second = response.tool_calls
    assert first == ToolCall('call_9', 'function', 'get_weather', '{"city":"Paris","unit":"c"}')
    assert (second.name, second.arguments) == ('convert', '{"value": 1')  # raw text kept, even invalid
    assert second.id.startswith('call_') and second.id != first.id
    assert response.generations[0].finish_reason == 'tool_calls'
    assert response.text == ''


def test_tool_call_response_names_arguments_of_a_wrong_type() -> None:
    with pytest.raises(TypeError, match=r'^arguments must be a mapping or JSON text \(str\), not list$'):
        ScriptedChatModel.tool_call_response('add', [1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r'^more\[1\] arguments must be a mapping or JSON text \(str\), not int$'):
        ScriptedChatModel.tool_call_response('add', {}, more=[('a', '{}'), ('b', 3)])  # type: ignore[list-item]


def test_stream_text_then_final_chunk_with_usage() -> None:
    usage = ScriptedChatModel.usage(30, 6, prompt_tokens_details={'cached_tokens': 10})
    model = ScriptedChatModel([ScriptedChatModel.text_response('It is 18 C in Paris today.', usage=usage)])
    chunks = stream(model, Prompt.of('weather?'))
    texts = [c.text for c in chunks[:-1]]
    assert len(texts) == 3
    assert ''.join(texts) == 'It is 18 C in Paris today.'
    assert all(c.usage is None and c.generations[0].finish_reason is None for c in chunks[:-1])
    final = chunks[-1]
    assert final.usage == Usage(30, 6, 36, {'cached_tokens': 10})
    assert final.generations[0].finish_reason == 'stop'
    assert final.text == ''


def test_stream_tool_calls_whole_in_last_chunk() -> None:
    response = ScriptedChatModel.tool_call_response(
        'get_weather', {'city': 'Oslo'}, id='c1', usage=ScriptedChatModel.usage(12, 3)
    )
    chunks = stream(ScriptedChatModel([response]), Prompt.of('weather?'))
    assert len(chunks) == 1
    assert chunks[0].tool_calls == (ToolCall('c1', 'function', 'get_weather', '{"city":"Oslo"}'),)
    assert chunks[0].generations[0].finish_reason == 'tool_calls'
    assert chunks[0].usage == Usage(12, 3, 15)


def test_stream_aggregates_back_to_the_response() -> None:
    response = ScriptedChatModel.tool_call_response(
        'lookup', {'q': 'x'}, id='c1', text='Let me look that up.', usage=ScriptedChatModel.usage(5, 5)
    )
    aggregator = ChatResponseAggregator()
    for chunk in stream(ScriptedChatModel([response]), Prompt.of('?')):
        aggregator.add(chunk)
    result = aggregator.result()
    assert result.text == 'Let me look that up.'
    assert result.tool_calls == response.tool_calls
    assert result.usage == response.usage
    assert result.generations[0].finish_reason == 'tool_calls'


def test_stream_empty_response_passes_through() -> None:
    usage_only = ChatResponse((), usage=Usage(1, 1, 2))
    assert stream(ScriptedChatModel([usage_only]), Prompt.of('?')) == [usage_only]
