"""A real MCP server (SDK MCPServer API) that misbehaves: it crashes mid-call, is slow, changes its tool list.

Run: ``python faulty.py stdio`` or ``python faulty.py http PORT``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

app = MCPServer('faulty', log_level='WARNING')


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
async def crash(ctx: Context) -> str:
    """Exits the process in the middle of the call (no answer)."""
    await asyncio.sleep(0.05)
    os._exit(3)


@app.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    await asyncio.sleep(seconds)
    return f'slept {seconds}'


@app.tool()
async def wait_for_file(path: str) -> str:
    """Waits (up to 10 s) for a file another tool of the same round creates."""
    for _ in range(200):
        if Path(path).exists():
            return 'saw the file'
        await asyncio.sleep(0.05)
    return 'the file never came'


@app.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds a tool named ``name`` and announces the change to both protocol eras."""

    def added(x: int) -> int:
        return x * 2

    app.add_tool(added, name=name, description=f'The added tool {name}: doubles x.')
    await ctx.notify_tools_changed()  # 2026-07-28 sessions: subscriptions/listen
    with contextlib.suppress(Exception):  # a 2026 session has no unsolicited notifications
        await ctx.request_context.session.send_tool_list_changed()  # 2025 sessions: the notification
    return f'added {name}'


if __name__ == '__main__':
    if sys.argv[1] == 'stdio':
        app.run()
    else:
        app.run('streamable-http', host='127.0.0.1', port=int(sys.argv[2]))
