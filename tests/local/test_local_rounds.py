"""LocalChatModel's per-round plan, the prompt it sends and what it makes of the reply (a fake server)."""

from __future__ import annotations

import asyncio
import inspect
import json
import pydoc
from collections.abc import AsyncIterator
from typing import Annotated, Literal

import pytest
from toolweave import ChatClient, ToolParam, tool
from toolweave.advisors import MessageChatMemoryAdvisor
from toolweave.chat import (
    AssistantMessage,
    ChatOptions,
    ChatResponse,
    Generation,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolweave.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolweave.providers import LocalChatModel, ToolExample
from toolweave.providers._local_prompting import HERMES_GEMMA_TEMPLATE
from toolweave.providers.local import FALLBACK_KEY, ROUND_KEY
from toolweave.tools import MethodToolCallback


@tool
def get_weather(city: Annotated[str, ToolParam(description='City name')], unit: Literal['c', 'f'] = 'c') -> str:
    """Current weather of a city."""
    return f'18 degrees {unit.upper()} and sunny in {city}'


@tool
def place_order(item: str, quantity: int = 1) -> str:
    """Place an order."""
    return f'{quantity} x {item}'


@tool(name='toolSearchTool')
def tool_search(query: str) -> str:
    """Search for tools."""
    return '[]'


WEATHER, ORDER, SEARCH = (MethodToolCallback(f) for f in (get_weather, place_order, tool_search))


def options(*tools: MethodToolCallback, **kw: object) -> ToolCallingChatOptions:
    return ToolCallingChatOptions(tool_callbacks=tools or (WEATHER, ORDER), **kw)  # type: ignore[arg-type]


def after_call(name: str, result: str, question: str = 'Weather in Oslo?') -> tuple[object, ...]:
    return (
        UserMessage(question),
        AssistantMessage(None, (ToolCall('c1', 'function', name, '{}'),)),
        ToolResponseMessage((ToolResponse('c1', name, result),)),
    )


# --- the plan -------------------------------------------------------------------------------------------


def test_a_question_with_tools_is_a_call_round_over_the_relevant_tools() -> None:
    plan = LocalChatModel().plan(Prompt((UserMessage('Please order 2 teas.'),), options()))
    assert (plan.kind, [d.name for d in plan.tools], plan.parts, plan.numbers) == (
        'call',
        ['place_order'],
        ('Please order 2 teas.',),
        ('2',),
    )
    two = LocalChatModel().plan(Prompt((UserMessage('Compare the weather in Rome and in Madrid.'),), options()))
    assert two.parts == ('Compare the weather in Rome', 'in Madrid.') and [d.name for d in two.tools] == ['get_weather']


def test_a_follow_up_question_keeps_calling_tools() -> None:
    history = (
        UserMessage('What is the weather in Paris?'),
        AssistantMessage('It is sunny in Paris.'),
        UserMessage('And in Tokyo?'),
    )
    plan = LocalChatModel().plan(Prompt(history, options()))
    assert plan.kind == 'call' and [d.name for d in plan.tools] == ['get_weather']  # the turn before decides


def test_tool_results_make_an_answer_round() -> None:
    plan = LocalChatModel().plan(Prompt(after_call('get_weather', '3 C, snow'), options()))
    assert (plan.kind, plan.results, plan.question) == ('answer', ('3 C, snow',), 'Weather in Oslo?')


def test_a_search_result_makes_a_call_round_over_the_found_tools() -> None:
    messages = after_call('toolSearchTool', '["get_weather"]', 'What is the weather in Lima?')
    plan = LocalChatModel().plan(Prompt(messages, options(SEARCH, WEATHER)))
    assert plan.kind == 'call' and [d.name for d in plan.tools] == ['get_weather']
    only_search = LocalChatModel().plan(Prompt(messages, options(SEARCH)))
    assert only_search.kind == 'answer'  # nothing found to call
    first = LocalChatModel().plan(Prompt((UserMessage('Weather in Lima and Quito?'),), options(SEARCH)))
    assert first.kind == 'call' and first.parts == ('Weather in Lima and Quito?',)  # one search for the question
    assert r'"pattern":"^(Weather\\ Lima\\ Quito)$"' in first.grammar()  # type: ignore[operator]


def test_a_question_no_offered_tool_names_searches_first() -> None:
    history = (
        UserMessage('What is the weather in Paris?'),
        AssistantMessage('It is sunny in Paris.'),
        UserMessage('Please order 2 pizzas.'),
    )
    plan = LocalChatModel().plan(Prompt(history, options(SEARCH, WEATHER)))  # found before: get_weather
    assert [d.name for d in plan.tools] == ['toolSearchTool']
    without_search = LocalChatModel().plan(Prompt(history, options(WEATHER)))
    assert [d.name for d in without_search.tools] == ['get_weather']  # the earlier question decides


def test_the_answer_restates_the_last_round_only() -> None:
    messages = (
        *after_call('toolSearchTool', '{"tools": ["get_weather"]}', 'Weather in Lima?'),
        AssistantMessage(None, (ToolCall('c2', 'function', 'get_weather', '{"city": "Lima"}'),)),
        ToolResponseMessage((ToolResponse('c2', 'get_weather', '18 C in Lima'),)),
    )
    plan = LocalChatModel().plan(Prompt(messages, options(SEARCH, WEATHER)))
    assert (plan.kind, plan.results) == ('answer', ('18 C in Lima',))


def test_tool_choice_narrows_or_switches_off_the_calls() -> None:
    asked = (UserMessage('What is the weather in Paris?'),)
    named = {'type': 'function', 'function': {'name': 'place_order'}}
    plan = LocalChatModel().plan(Prompt(asked, options(tool_choice=named)))
    assert [d.name for d in plan.tools] == ['place_order']
    assert LocalChatModel().plan(Prompt(asked, options(tool_choice='none'))).kind == 'answer'


def test_structured_output_calls_the_tools_first() -> None:
    from toolweave.chat.options import OutputSchema

    output = OutputSchema('Weather', {'type': 'object', 'properties': {'city': {'type': 'string'}}})
    model = LocalChatModel()
    asked = model.plan(Prompt((UserMessage('Weather in Paris?'),), options(output_schema=output)))
    assert asked.kind == 'call'
    sent = model.prepare(Prompt((UserMessage('Weather in Paris?'),), options(output_schema=output))).options
    assert sent is not None and sent.output_schema is None  # a call round: the grammar, no response_format
    answered = model.plan(Prompt(after_call('get_weather', '18 C'), options(output_schema=output)))
    assert answered.kind == 'open'  # then llama.cpp's response_format
    assert model.plan(Prompt((UserMessage('Weather in Paris?'),), ChatOptions(output_schema=output))).kind == 'open'


def test_open_rounds() -> None:
    model = LocalChatModel()
    assert model.plan(Prompt((UserMessage('x'),), ChatOptions(extra_body={'grammar': 'root ::= "a"'}))).kind == 'open'
    assert model.plan(Prompt((UserMessage('x'), AssistantMessage('partial')), options())).kind == 'open'
    assert model.plan(Prompt((UserMessage('Hello'),), ChatOptions())).kind == 'answer'


# --- the prompt sent ----------------------------------------------------------------------------------


def test_prepared_call_round_lists_the_tools_and_sends_a_grammar_not_tools() -> None:
    example = ToolExample('Weather in Rome?', 'get_weather', {'city': 'Rome'}, '20 C', 'It is 20 C in Rome.')
    model = LocalChatModel(examples=[example], max_tokens=64)
    prompt = Prompt((SystemMessage('Be brief.'), UserMessage('Compare the weather in Rome and in Madrid.')), options())
    prepared = model.prepare(prompt)
    sent = prepared.options
    assert type(sent) is ChatOptions  # no tools: llama.cpp refuses a grammar next to OpenAI tools
    assert (sent.max_tokens, sent.temperature, sent.seed) == (128, 0.0, 42)  # 64 per call, two calls
    grammar = sent.extra_body['grammar']
    assert grammar.startswith('%llguidance {}\nstart: call_0 call_1\n')
    messages = prepared.messages
    assert isinstance(messages[0], SystemMessage) and '<tools>' in messages[0].text
    assert [json.loads(line)['name'] for line in messages[0].text.split('<tools>\n')[1].splitlines()[:2]] == [
        'get_weather',
        'place_order',
    ]
    assert messages[1] == SystemMessage('Be brief.')
    assert messages[2] == UserMessage('Weather in Rome?')  # the caller's example, after the system messages
    assert messages[-1] == prompt.messages[-1]
    assert not model.running


def test_no_example_is_synthesised() -> None:
    prepared = LocalChatModel().prepare(Prompt((UserMessage('What is the weather in Paris?'),), options()))
    assert len(prepared.messages) == 2  # the tool listing and the question: no invented values to leak


def test_prepared_answer_round_and_caller_settings() -> None:
    prompt = Prompt(after_call('get_weather', '3 C, snow'), options(max_tokens=5, temperature=0.7, seed=1))
    sent = LocalChatModel().prepare(prompt).options
    assert sent is not None
    assert (sent.max_tokens, sent.temperature, sent.seed) == (5, 0.7, 1)
    assert sent.extra_body['grammar'].startswith('%llguidance {}\nstart: WORD (GAP WORD)* END\n')
    assert '"snow"' in sent.extra_body['grammar'] and '"3"' in sent.extra_body['grammar']
    plain = LocalChatModel().prepare(Prompt.of('Hello', ChatOptions()))
    assert plain.messages == (UserMessage('Hello'),) and 'grammar' in plain.options.extra_body  # type: ignore[union-attr]


# --- the reply ------------------------------------------------------------------------------------------


class FakeChat:
    """Stands in for the OpenAIChatModel behind a LocalChatModel: replies with ``text``."""

    def __init__(self, *texts: str, finish_reason: str = 'stop') -> None:
        self.texts = list(texts)
        self.finish_reason = finish_reason
        self.prompts: list[Prompt] = []

    def call(self, prompt: Prompt) -> ChatResponse:
        self.prompts.append(prompt)
        text = self.texts.pop(0)
        generation = Generation(AssistantMessage(text), self.finish_reason)
        return ChatResponse((generation,), id='r1', model='m', usage=Usage(10, 1, 11))

    async def acall(self, prompt: Prompt) -> ChatResponse:
        return self.call(prompt)

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        yield self.call(prompt)

    def close(self) -> None:
        pass


def fake_model(*texts: str, finish_reason: str = 'stop') -> LocalChatModel:
    model = LocalChatModel()
    model._handle.server = object()  # "running": requests go to the fake chat
    model._handle.chat = FakeChat(*texts, finish_reason=finish_reason)  # type: ignore[assignment]
    return model


def three_ways(model: LocalChatModel, prompt: Prompt) -> list[ChatResponse]:
    async def streamed() -> list[ChatResponse]:
        return [chunk async for chunk in model.stream(prompt)]

    chunks = asyncio.run(streamed())
    assert len(chunks) == 1  # a planned round streams as one checked chunk
    return [model.call(prompt), asyncio.run(model.acall(prompt)), chunks[0]]


def test_a_call_round_reply_becomes_tool_calls() -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    )
    model = fake_model(text, text, text)
    for response in three_ways(model, Prompt((UserMessage('Weather in Rome?'),), options())):
        assert [(c.name, c.arguments) for c in response.tool_calls] == [('get_weather', '{"city": "Rome"}')]
        assert response.result is not None and response.result.finish_reason == 'tool_calls'
        assert response.result.metadata[ROUND_KEY] == 'call' and response.text == ''
        assert response.usage == Usage(10, 1, 11)
    ids = {
        c.id
        for r in three_ways(fake_model(text, text, text), Prompt((UserMessage('x'),), options()))
        for c in r.tool_calls
    }
    assert len(ids) == 3  # a fresh id per call


@pytest.mark.parametrize(
    ('reply', 'answer', 'fallback'),
    [
        ('There is snow in Oslo.', 'There is snow in Oslo.', False),
        ('It is 3 C.<end_of_turn>junk', 'It is 3 C.', False),
        ('Weather in Oslo?', '3 C, snow', True),  # an echo of the question restates nothing
        ('', '3 C, snow', True),
        ('It is very very cold and snow.', 'It is very very cold and snow.', False),
        # a small model's loop (seen with the embedded model after a tool error), even when it restates a result
        ('You have snow: https: https: https: https: https: https:', '3 C, snow', True),
        ('Snow, snow; SNOW snow snow in Oslo.', '3 C, snow', True),
        ('Snow, snow; SNOW in Oslo at 3:3:3, 3, 3, 3.', 'Snow, snow; SNOW in Oslo at 3:3:3, 3, 3, 3.', False),
    ],
)
def test_an_answer_is_clean_and_restates_the_results(reply: str, answer: str, fallback: bool) -> None:
    model = fake_model(reply, reply, reply)
    for response in three_ways(model, Prompt(after_call('get_weather', '3 C,\n snow'), options())):
        assert response.text == answer
        assert response.result is not None and response.result.metadata.get(FALLBACK_KEY, False) is fallback
        assert response.result.metadata[ROUND_KEY] == 'answer'


@pytest.mark.parametrize(
    ('text', 'whole'),
    [
        ('It is 10:10:10 in Oslo.', True),  # numbers never loop
        ('Use a 1:1:1 ratio of cement, sand and gravel.', True),
        ('The drone is docked at base, at 0, 0, 0, 0, 0.', True),
        ('Flights to Bora Bora, Bora Bora airport is open.', True),  # a name said twice
        ('Go go go go!', True),
        ('Go go go go go!', False),
        ('You have a request to the URL: https: https: https: https: https:', False),
        ('xhttps https https https https.', True),  # four in a row, a fifth only inside another word
        ('', False),
    ],
)
def test_a_loop_is_one_word_five_times_in_a_row(text: str, whole: bool) -> None:
    from toolweave.providers.local import _sentence

    assert _sentence(text, 'stop') is whole
    assert _sentence(text, 'length') is False  # cut at the token limit: never whole


def test_an_answer_cut_at_the_token_limit_is_replaced_by_the_results() -> None:
    model = fake_model('There is snow in', 'There is snow in', 'There is snow in', finish_reason='length')
    for response in three_ways(model, Prompt(after_call('get_weather', '3 C,\n snow'), options())):
        assert response.text == '3 C, snow'
        assert response.result is not None and response.result.metadata[FALLBACK_KEY] is True
        assert response.result.finish_reason == 'stop'  # the text given is whole
    # without tool results there is nothing to fall back on: the cut answer is given as it is
    cut = fake_model('Hello there', finish_reason='length').call(Prompt.of('Hello', ChatOptions()))
    assert cut.text == 'Hello there' and cut.result is not None and cut.result.finish_reason == 'length'
    assert FALLBACK_KEY not in cut.result.metadata


def test_an_answer_must_restate_every_result() -> None:
    messages = (
        UserMessage('Compare the weather in Rome and in Madrid.'),
        AssistantMessage(
            None,
            (
                ToolCall('c1', 'function', 'get_weather', '{"city": "Rome"}'),
                ToolCall('c2', 'function', 'get_weather', '{"city": "Madrid"}'),
            ),
        ),
        ToolResponseMessage(
            (ToolResponse('c1', 'get_weather', '18 C, sunny in Rome'), ToolResponse('c2', 'get_weather', '25 C, clear'))
        ),
    )
    prompt = Prompt(messages, options())
    assert fake_model('It is sunny in Rome.').call(prompt).text == '18 C, sunny in Rome 25 C, clear'
    assert fake_model('Rome is sunny, Madrid is clear.').call(prompt).text == 'Rome is sunny, Madrid is clear.'


def test_a_conversation_with_memory_calls_a_tool_every_turn_and_stores_clean_answers() -> None:
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "%s"}}</tool_call>'
    model = fake_model(call % 'Paris', 'It is sunny in Paris.', call % 'Tokyo', '<tool_response>x</tool_response>')
    memory = MessageWindowChatMemory(InMemoryChatMemoryRepository())
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()
    first = client.prompt('What is the weather in Paris?').tools(get_weather).advisors(chat_memory_conversation_id='c')
    assert first.call().content() == 'It is sunny in Paris.'
    second = client.prompt('And in Tokyo?').tools(get_weather).advisors(chat_memory_conversation_id='c').call()
    assert second.content() == '18 degrees C and sunny in Tokyo'  # markup only: the tool's own words
    assert [m.text for m in memory.get('c')] == [
        'What is the weather in Paris?',
        'It is sunny in Paris.',
        'And in Tokyo?',
        '18 degrees C and sunny in Tokyo',
    ]
    sent = model._handle.chat.prompts  # type: ignore[union-attr]
    assert 'grammar' in sent[2].options.extra_body and sent[2].options.extra_body['grammar'].startswith(
        '%llguidance {}\nstart: call_0\n'
    )  # turn 2's first round is a call round, whatever the history


def test_help_does_not_print_the_chat_template() -> None:
    assert inspect.signature(LocalChatModel).parameters['chat_template'].default is None
    assert LocalChatModel().chat_template == HERMES_GEMMA_TEMPLATE
    assert LocalChatModel(chat_template='{{ x }}').chat_template == '{{ x }}'
    signature_line = next(
        line
        for line in pydoc.render_doc(LocalChatModel, renderer=pydoc.plaintext).splitlines()
        if 'chat_template' in line
    )
    assert "chat_template: 'str | None' = None" in signature_line
    assert 'start_of_turn' not in pydoc.render_doc(LocalChatModel.__init__)
