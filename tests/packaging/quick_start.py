"""The README quick start against ScriptedChatModel (or the embedded local model with ``local``), as a user runs it.

Run by tests/packaging/test_wheel.py with the interpreter of a clean venv that has only the built wheel installed;
prints one JSON object for the test to check.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Literal

import toolweave
import toolweave._core
from toolweave import ChatClient, ToolParam, tool
from toolweave.chat import ChatModel
from toolweave.core import IMPLEMENTATION, parse_arguments
from toolweave.providers import ScriptedChatModel

CITIES: list[str] = []


@tool
def get_weather(city: Annotated[str, ToolParam(description='City name')], unit: Literal['c', 'f'] = 'c') -> str:
    """Current weather of a city."""
    CITIES.append(city)
    return f'18 degrees {unit.upper()} and sunny in {city}'


def main() -> None:
    """Run one tool round and the answer; print what happened."""
    model: ChatModel
    if sys.argv[1:] == ['local']:
        from toolweave.providers import LocalChatModel

        model = LocalChatModel()
    else:
        model = ScriptedChatModel(
            [
                ScriptedChatModel.tool_call_response(
                    'get_weather', {'city': 'Paris'}, usage=ScriptedChatModel.usage(9, 4)
                ),
                ScriptedChatModel.text_response('18 C and sunny in Paris.', usage=ScriptedChatModel.usage(30, 6)),
            ]
        )
    client = ChatClient.builder(model).default_system('Answer briefly.').build()
    response = client.prompt('What is the weather in Paris?').tools(get_weather).call()
    usage = response.chat_response().usage
    print(
        json.dumps(
            {
                'version': toolweave.__version__,
                'core_file': toolweave._core.__file__,
                'implementation': IMPLEMENTATION,
                'parsed': parse_arguments('{"city": "Par', mode='partial'),
                'content': response.content(),
                'cities': CITIES,
                'usage': None if usage is None else [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens],
            }
        )
    )
    close = getattr(model, 'close', None)
    if close is not None:
        close()


if __name__ == '__main__':
    main()
