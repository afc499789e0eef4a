"""The ``redis_url`` fixture: a redis-server of its own on a free 127.0.0.1 port, stopped afterwards.

Shared by the memory, approvals (run-state stores), durable and content tests through tests/conftest.py.
Without a ``redis-server`` binary the Redis tests are skipped with a printed reason (``make test``
installs Debian's as root).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def redis_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``(url, process)`` of a fresh redis-server on a free 127.0.0.1 port (skips without the binary); stopped after.

    A test may kill or SIGSTOP the process; it is resumed and stopped if still running.
    """
    binary = shutil.which('redis-server')
    if binary is None:
        reason = 'redis-server not installed (make test installs Debian redis-server as root); Redis tests skipped'
        print(reason)
        pytest.skip(reason)
    import redis

    port = _free_port()
    process = subprocess.Popen(
        [binary, '--port', str(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f'redis://127.0.0.1:{port}/0'
    try:
        client = redis.Redis.from_url(url)
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.025)
        else:
            pytest.fail('redis-server did not answer')
        client.close()
        yield url, process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.terminate()
            process.wait(10)


@pytest.fixture(scope='module')
def redis_url() -> Iterator[str]:
    with redis_server() as (url, _):
        yield url
