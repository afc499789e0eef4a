"""End to end with the embedded local model: it calls a tool of a real MCP server (stdio) and answers."""

from __future__ import annotations

import pytest
from conftest import stdio
from support.local_model import needs_local
from toolweave import ChatClient
from toolweave.chat import Prompt
from toolweave.mcp import McpToolCallbackProvider, allow_tools
from toolweave.providers import LocalChatModel, ToolExample

EXAMPLES = (
    ToolExample(
        'What is the weather in Paris?',
        'get_weather',
        {'city': 'Paris'},
        'Paris: sunny, 21 C for 1 day(s)',
        'It is sunny and 21 C in Paris.',
    ),
)


@pytest.mark.local_model
@needs_local
def test_local_model_calls_an_mcp_tool() -> None:
    prompts: list[Prompt] = []
    server = stdio('weather', 'weather.py')
    with (
        McpToolCallbackProvider(server, tool_filter=allow_tools(weather=['get_weather'])) as tools,
        LocalChatModel(examples=EXAMPLES, max_tokens=96) as model,
    ):
        original = model.call

        def recording(prompt: Prompt) -> object:
            prompts.append(prompt)
            return original(prompt)

        model.call = recording  # type: ignore[method-assign]
        response = ChatClient.create(model).prompt('What is the weather in Tokyo?').tools(tools).call()
    assert len(prompts) == 2  # a tool round, then the answer round
    tool_message = prompts[1].messages[-1]
    (result,) = tool_message.responses  # type: ignore[attr-defined]
    assert result.name == 'get_weather' and not result.is_error
    assert result.response_data.endswith('(from weather)')  # the MCP server really answered
    assert 'Tokyo' in result.response_data
    assert response.content().strip()
