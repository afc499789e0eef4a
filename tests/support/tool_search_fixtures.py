"""Helpers shared by the tool-search tests: the 54-tool bilingual set as callbacks, and a loop driver."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolweave import ChatClient
from toolweave.advisors import ToolSearchToolCallingAdvisor
from toolweave.chat import Prompt
from toolweave.providers import ScriptedChatModel
from toolweave.tools import ToolContext, ToolDefinition, ToolMetadata

from support.loop_fixtures import MODES, run_request

__all__ = ['DATA', 'MODES', 'CatalogTool', 'S', 'catalog', 'make_client', 'names', 'run', 'search_payload', 'tool']

S = ScriptedChatModel
DATA = json.loads((Path(__file__).parents[1] / 'data' / 'tool_search_set.json').read_text(encoding='utf-8'))


class CatalogTool:
    """A tool of the 54-tool set that answers with its name and arguments."""

    def __init__(self, spec: dict[str, Any]) -> None:
        properties = {k: {'type': 'string', 'description': v} for k, v in spec['params'].items()}
        schema = {
            'type': 'object',
            'properties': properties,
            'required': list(properties),
            'additionalProperties': False,
        }
        self._definition = ToolDefinition(spec['name'], spec['description'], schema)
        self.calls: list[dict[str, Any]] = []

    @property
    def tool_definition(self) -> ToolDefinition:
        return self._definition

    @property
    def tool_metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        arguments = json.loads(tool_input)
        self.calls.append(arguments)
        return f'{self._definition.name}: ' + ', '.join(f'{k}={v}' for k, v in sorted(arguments.items()))

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        return self.call(tool_input, tool_context)


def catalog() -> list[CatalogTool]:
    return [CatalogTool(spec) for spec in DATA['tools']]


def tool(name: str, description: str) -> CatalogTool:
    return CatalogTool({'name': name, 'description': description, 'params': {}})


def names(prompt: Prompt) -> list[str]:
    return [cb.tool_definition.name for cb in prompt.options.tool_callbacks]  # type: ignore[union-attr]


def make_client(model: ScriptedChatModel, advisor: ToolSearchToolCallingAdvisor) -> ChatClient:
    return ChatClient.builder(model).tool_calling_advisor(advisor).build()


def run(client: ChatClient, mode: str, text: str | Any, tools: list, *advisors: Any, **params: Any) -> Any:
    """One request in ``mode``: the final ChatResponse (call/acall) or the text-carrying chunks (stream)."""
    spec = (client.prompt(text) if isinstance(text, str) else client.prompt().messages(*text)).tools(*tools)
    result = run_request(spec.advisors(*advisors, **params), mode)
    if mode != 'stream':
        return result.response
    return [c for c in result.chunks if c.generations and c.result.output.text] or result.chunks


def search_payload(prompt: Prompt) -> dict[str, Any]:
    """The JSON result of the search answered in the last message of ``prompt``."""
    return json.loads(prompt.messages[-1].responses[0].response_data)  # type: ignore[union-attr]
