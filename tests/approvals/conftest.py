"""Fixtures of the approval tests: a Redis server started for the module (127.0.0.1, as tests/test_memory.py does)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope='module')
def redis_url() -> Iterator[str]:
    binary = shutil.which('redis-server')
    if binary is None:
        pytest.skip('redis-server not installed; Redis tests skipped')
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
        yield url
    finally:
        process.terminate()
        process.wait(10)
