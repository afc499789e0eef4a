"""The ``>>>`` examples in public docstrings run and give what they show."""

import doctest
import importlib

import pytest

MODULES = [
    'toolweave.tools.method',
    'toolweave.tools.limits',
    'toolweave.memory.window',
    'toolweave.memory.sqlite',
    'toolweave.memory.serialization',
    'toolweave.search.base',
    'toolweave.search.regex',
    'toolweave.search.lexical',
    'toolweave.search.vector',
    'toolweave.search.sessions',
    'toolweave.search._search_tool',
    'toolweave.search._tokenize',
    'toolweave.providers.openai',
    'toolweave.providers.anthropic',
    'toolweave.providers.ollama',
    'toolweave.providers.gemini',
    'toolweave.providers.openai_responses',
    'toolweave.providers.replay',
    'toolweave.tools.function',
    'toolweave.advisors.tool_search',
    'toolweave.events',
    'toolweave.chat.stream',
]


@pytest.mark.parametrize('name', MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
