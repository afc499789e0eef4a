"""MCP test fixtures: real MCP servers (the SDK's own server API) as subprocesses, over stdio and HTTP on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip('mcp', reason="needs pip install 'toolweave[mcp]'")

from toolweave.mcp import StdioServer

SERVERS = Path(__file__).parent / 'servers'
ROOT = Path(__file__).resolve().parents[2]


def server_env() -> dict[str, str]:
    """The environment of server subprocesses: this one, with the test servers and the repo importable."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(SERVERS), str(ROOT / 'python'), env.get('PYTHONPATH', '')])
    return env


def import_server_module(name: str) -> ModuleType:
    """Import ``servers/<name>.py`` under ``name`` (the module the served processes import)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SERVERS / f'{name}.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def stdio(name: str, script: str, *args: str) -> StdioServer:
    """A test server script of ``servers/`` run over stdio."""
    return StdioServer(name, sys.executable, [str(SERVERS / script), 'stdio', *args], env=server_env())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(
                f'server exited with {process.returncode}: {process.stderr.read() if process.stderr else ""}'
            )
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f'no server on port {port} after {deadline} s')


def start_http(*command: str) -> Iterator[int]:
    """Start a server process listening on a free loopback port (``{port}`` in ``command``); yield the port."""
    port = free_port()
    argv = [part.format(port=port) for part in command]
    process = subprocess.Popen(argv, env=server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, process)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr:
            process.stderr.close()


@pytest.fixture(scope='module')
def weather_http() -> Iterator[str]:
    """``weather.py`` over streamable HTTP: its URL."""
    for port in start_http(sys.executable, str(SERVERS / 'weather.py'), 'http', '{port}', 'weather-http'):
        yield f'http://127.0.0.1:{port}/mcp'


@pytest.fixture(scope='module')
def weather_sse() -> Iterator[str]:
    """``weather.py`` over the older HTTP+SSE transport: its SSE URL."""
    for port in start_http(sys.executable, str(SERVERS / 'weather.py'), 'sse', '{port}'):
        yield f'http://127.0.0.1:{port}/sse'
