"""Helpers of the memory attack tests and soak: a real redis-server on a free loopback port, conversation checks.

:class:`RedisServer` starts ``redis-server`` on 127.0.0.1 (optionally with an fsync-always AOF), can kill and
restart it on the same port. :func:`problems` lists what makes a stored conversation one that
provider APIs reject: an assistant tool call without a response right after it, or tool responses
that answer no call of the assistant message before them.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from types import TracebackType

import pytest
from toolweave.chat import AssistantMessage, Message, SystemMessage, ToolResponseMessage

__all__ = ['RedisServer', 'free_port', 'problems', 'redis_server']


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A ``redis-server`` child process on 127.0.0.1: start, kill, restart on the same port.

    Args:
        port: Default: a free port.
        persist_dir: ``None``: no persistence (a restart empties it). A directory: append-only file
            with ``appendfsync always``, so every acknowledged write survives a SIGKILL.
    """

    def __init__(self, port: int | None = None, persist_dir: str | None = None) -> None:
        binary = shutil.which('redis-server')
        if binary is None:
            raise FileNotFoundError('redis-server is not installed')
        self.binary = binary
        self.port = port or free_port()
        self.url = f'redis://127.0.0.1:{self.port}/0'
        self.process: subprocess.Popen[bytes] | None = None
        self.persistence = ['--save', '', '--appendonly', 'no']
        if persist_dir is not None:
            self.persistence = ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', persist_dir]

    def start(self) -> None:
        """Start the server and wait (up to 10 s) until it answers PING."""
        import redis

        self.process = subprocess.Popen(
            [self.binary, '--port', str(self.port), '--bind', '127.0.0.1', *self.persistence],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1, socket_connect_timeout=1)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    if time.monotonic() > deadline or self.process.poll() is not None:
                        raise
                    time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL the server and reap it."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def restart(self) -> None:
        """Kill, then start again on the same port (without ``persist_dir`` the data is gone)."""
        self.kill()
        self.start()

    def __enter__(self) -> RedisServer:  # noqa: PYI034
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.kill()


@pytest.fixture(scope='module')
def redis_server() -> Iterator[RedisServer]:
    """A redis-server for the module's tests (skipped when the binary is missing)."""
    if shutil.which('redis-server') is None:
        pytest.skip('redis-server not installed (make test installs Debian redis-server as root)')
    with RedisServer() as server:
        yield server


def problems(messages: Sequence[Message]) -> list[str]:
    """Why providers would reject ``messages`` as a history (empty: valid).

    An assistant message's tool calls must each be answered by the tool-response messages right after
    it (system messages in between are skipped); a tool-response message must answer calls of the
    assistant message before that run.
    """
    found: list[str] = []
    asked: set[str] = set()
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, ToolResponseMessage):
            ids = {r.id for r in message.responses}
            if not ids <= asked:
                found.append(f'message {index}: responses {sorted(ids - asked)} answer no preceding call')
            answered |= ids
            continue
        if asked - answered:
            found.append(f'message {index - 1}: calls {sorted(asked - answered)} have no response')
        asked, answered = set(), set()
        if isinstance(message, AssistantMessage) and message.tool_calls:
            asked = {c.id for c in message.tool_calls}
    if asked - answered:
        found.append(f'end: calls {sorted(asked - answered)} have no response')
    return found
