"""The one fake weather tool of the tests, in its two forms.

- ``get_weather``: a ``@tool`` function (schema from its signature) that the loop, tools and provider tests run;
  ``'18 C and sunny in <city>'``, and ``LookupError('no such city')`` for ``'Atlantis'`` (a failing tool).
- ``WeatherTool``: a raw ``ToolCallback`` with a fixed definition for request-body tests, answering ``'18 C'``.
"""

from __future__ import annotations

from typing import Any

from toolweave import tool
from toolweave.tools import ToolDefinition, ToolMetadata

WEATHER_SCHEMA: dict[str, Any] = {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    if city == 'Atlantis':
        raise LookupError('no such city')
    return f'18 C and sunny in {city}'


class WeatherTool:
    """A minimal ``ToolCallback`` named ``get_weather`` (description, ``input_schema`` as given); answers ``'18 C'``."""

    def __init__(self, input_schema: dict[str, Any] | None = None) -> None:
        schema = WEATHER_SCHEMA if input_schema is None else input_schema
        self.tool_definition = ToolDefinition('get_weather', 'Current weather for a city', schema)
        self.tool_metadata = ToolMetadata()

    def call(self, tool_input: str, tool_context: Any = None) -> str:
        return '18 C'

    async def acall(self, tool_input: str, tool_context: Any = None) -> str:
        return '18 C'
