"""What ``from toolweave import ChatClient, tool`` loads (issue #14: at most 0.15 s beyond bare Python).

Checked by module, in fresh interpreters, never by time: asyncio, the loop engine, the advisors, run
events, run states, structured output, tool binding and schema generation (pydantic, docstring_parser)
and tracing (opentelemetry) load when first used, and every path still works when it is what loads them.
The times themselves are in benches/test_bench_import.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

DEFERRED = {
    'asyncio',
    'pydantic',
    'pydantic_core',
    'docstring_parser',
    'opentelemetry',
    'httpx',
    'toolweave.advisors._rounds',
    'toolweave.advisors.chain',
    'toolweave.advisors.model_advisors',
    'toolweave.advisors.structured_output',
    'toolweave.advisors.tool_calling',
    'toolweave.events',
    'toolweave.runstate.base',
    'toolweave.runstate.state',
    'toolweave.structured',
    'toolweave.tools._concurrent',
    'toolweave.tools.function',
    'toolweave.tools.manager',
    'toolweave.tools.method',
    'toolweave.tools.provider',
    'toolweave.tools.schema',
}
"""Modules ``from toolweave import ChatClient, tool`` must not import (each is needed only once a request runs)."""


def run_fresh(code: str) -> str:
    """The standard output of ``code`` run by a new interpreter (its errors fail the test with their text)."""
    done = subprocess.run([sys.executable, '-c', code], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def loaded_after(statement: str) -> set[str]:
    return set(run_fresh(f'import sys\n{statement}\nprint("\\n".join(sys.modules))').split())


def test_chat_client_and_tool_load_no_engine_events_advisors_or_pydantic() -> None:
    loaded = loaded_after('from toolweave import ChatClient, tool')
    assert {'toolweave.client', 'toolweave.tools.decorator'} <= loaded  # the import did happen
    assert sorted(DEFERRED & loaded) == []


def test_building_a_client_and_a_request_loads_no_engine() -> None:
    """Configuring a client and a request (no call yet) stays as light as the import."""
    loaded = loaded_after(
        'from toolweave import ChatClient, ChatOptions\n'
        'from toolweave.providers import ScriptedChatModel\n'
        "client = ChatClient.builder(ScriptedChatModel([])).default_system('Be brief.').build()\n"
        "spec = client.prompt('hi').options(ChatOptions(temperature=0.0)).tool_context({'user': 'ada'})\n"
    )
    assert sorted(DEFERRED & loaded) == []


def test_tool_decoration_builds_the_schema_and_so_loads_pydantic_but_not_the_engine() -> None:
    loaded = loaded_after('from toolweave import tool\n@tool\ndef get_weather(city: str) -> str:\n    return city\n')
    assert {'pydantic', 'toolweave.tools.schema'} <= loaded
    assert sorted(loaded & {'toolweave.advisors._rounds', 'toolweave.events', 'toolweave.tools.manager'}) == []


RUN = '''
import asyncio
from pydantic import BaseModel
from toolweave import ChatClient, tool
from toolweave.providers import ScriptedChatModel

@tool
def get_weather(city: str) -> str:
    """Current weather of a city."""
    return f'Sunny in {city}'

class Answer(BaseModel):
    city: str

def script():
    return ScriptedChatModel([
        ScriptedChatModel.tool_call_response('get_weather', {'city': 'Paris'}),
        ScriptedChatModel.text_response('{"city": "Paris"}'),
    ])

def client():
    return ChatClient.builder(script()).build()

print('call', client().prompt('Weather?').tools(get_weather).call().content())
print('events', [e.kind for e in client().prompt('Weather?').tools(get_weather).stream().events()][-1])
print('entity', client().prompt('Weather?').tools(get_weather).entity(Answer).city)
print('acall', asyncio.run(client().prompt('Weather?').tools(get_weather).acall()).content())
print('paused', client().prompt('Weather?').tools(get_weather).call().is_paused())
'''


def test_every_path_works_when_it_is_what_loads_the_engine() -> None:
    """A fresh interpreter's first call, stream, entity and async call import the deferred modules themselves."""
    out = run_fresh(RUN).splitlines()
    assert out == [
        'call {"city": "Paris"}',
        'events run_finished',
        'entity Paris',
        'acall {"city": "Paris"}',
        'paused False',
    ]


@pytest.mark.parametrize(
    'module', sorted({name for name in DEFERRED if name.startswith('toolweave.')} | {'toolweave.client'})
)
def test_each_deferred_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """No import cycle that the former eager import order hid: each module loads on its own."""
    assert module in loaded_after(f'import {module}')
