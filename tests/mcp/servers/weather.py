"""A real MCP server written with the SDK's MCPServer API: weather tools, an error, an image, structured content.

Run: ``python weather.py stdio [NAME]``, ``python weather.py http PORT [NAME]`` or ``python weather.py sse PORT``.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Image
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

ARGS = sys.argv[2:] if sys.argv[1] == 'stdio' else sys.argv[3:]  # stdio [NAME] | http PORT [NAME] | sse PORT
NAME = ARGS[0] if ARGS else 'weather'
app = MCPServer(NAME, log_level='WARNING')
PIXEL = base64.b64decode(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
)


CALLS = {'get_weather': 0}


@app.tool()
def get_weather(city: Annotated[str, Field(description='City name')], days: int = 1) -> str:
    """Weather forecast for a city."""
    CALLS['get_weather'] += 1
    return f'{city}: sunny, 21 C for {days} day(s) (from {NAME})'


@app.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(f'cannot do it: {reason}')


@app.tool()
def snapshot() -> Image:
    """A 1x1 PNG image."""
    return Image(data=PIXEL, format='png')


@app.tool()
def stats(city: str) -> dict[str, float]:
    """Structured statistics."""
    return {'temperature': 21.5, 'humidity': 0.4}


@app.tool()
def weather_calls() -> int:
    """How many get_weather calls reached this server."""
    return CALLS['get_weather']


@app.tool()
def touch(path: str) -> str:
    """Create a file (the other half of the concurrency test)."""
    Path(path).write_text('x', encoding='utf-8')
    return f'touched by {NAME}'


if __name__ == '__main__':
    if sys.argv[1] == 'stdio':
        app.run()
    elif sys.argv[1] == 'sse':
        app.run('sse', host='127.0.0.1', port=int(sys.argv[2]))
    else:
        app.run('streamable-http', host='127.0.0.1', port=int(sys.argv[2]))
