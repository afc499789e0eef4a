"""The replay server stays quiet when a client goes away mid-reply (tests close streams early on purpose)."""

from __future__ import annotations

import socket
import time

import pytest
from toolweave.providers.replay import ReplayServer, Reply


def _read_a_little_and_reset(url: str) -> None:
    host, port = url.removeprefix('http://').split(':')
    with socket.create_connection((host, int(port))) as conn:
        conn.sendall(b'POST /v1/chat HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}')
        conn.recv(64)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')  # RST on close


def test_a_client_reset_mid_reply_prints_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    body = b'data: {"x": 1}\n\n' * 20_000
    with ReplayServer([Reply(body=body, content_type='text/event-stream', piece=16)]) as server:
        _read_a_little_and_reset(server.url)
        deadline = time.monotonic() + 5
        while len(server.requests) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # the handler's next writes meet the reset
    assert len(server.requests) == 1
    assert 'Traceback' not in capfd.readouterr().err
