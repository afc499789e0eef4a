"""Loop-shaped corpus cases (tests/data/cases/*-loop.json) replayed through ChatClient in every path."""

import asyncio
import json
from pathlib import Path

import pytest
from toolweave import ChatClient
from toolweave.chat import AssistantMessage, ChatResponse, Generation, ToolCall
from toolweave.providers import ScriptedChatModel
from toolweave.tools import MethodToolCallback

CASES = sorted((Path(__file__).parents[1] / 'data' / 'cases').glob('*-loop.json'))


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def tools_of(case: dict) -> list[MethodToolCallback]:
    callbacks = []
    for name, spec in case['input']['tools'].items():

        def body(_result: str = spec['result']) -> str:
            return _result

        callbacks.append(MethodToolCallback(body, name=name, description=name, return_direct=spec['return_direct']))
    return callbacks


def script_of(case: dict) -> list[ChatResponse]:
    script = []
    for turn in case['input']['model_turns']:
        calls = tuple(
            ToolCall(c['id'], 'function', c['name'], json.dumps(c['arguments'])) for c in turn.get('tool_calls', [])
        )
        finish = 'tool_calls' if calls else 'stop'
        script.append(ChatResponse((Generation(AssistantMessage(turn.get('text'), calls), finish),)))
    return script


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream'])
@pytest.mark.parametrize('path', CASES, ids=[p.stem for p in CASES])
def test_loop_case(path, mode):
    case = load(path)
    model = ScriptedChatModel(script_of(case))
    spec = ChatClient.create(model).prompt('go').tools(*tools_of(case))
    if mode == 'call':
        chat = spec.call().chat_response()
    elif mode == 'acall':
        chat = asyncio.run(spec.acall()).chat_response()
    else:

        async def run():
            return [r async for r in spec.stream().chat_responses()]

        chat = [c for c in asyncio.run(run()) if c.generations][-1]
    expected = case['expected']
    assert len(model.prompts) == expected['model_calls']
    if 'direct_results' in expected:
        assert [g.output.text for g in chat.generations] == expected['direct_results']
        assert {g.finish_reason for g in chat.generations} == {'returnDirect'}
    assert chat.metadata['toolCallingRounds'] == expected['rounds']


def test_the_corpus_has_a_loop_case():
    assert [p.name for p in CASES] == ['B21-loop.json']
