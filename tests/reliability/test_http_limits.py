"""Answers and error bodies are read up to a limit: typed error beyond it, memory bounded, the rest never read.

The huge bodies are generated on the fly by the loopback server (never held in memory); peak RSS is
measured in a subprocess (``VmHWM`` reset before the request, read after it) so the test process's own
history does not blur it.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from http_faults import ANSWERS, Conn, FaultServer, Request, build_model, response_head, run
from toolweave.exceptions import ProviderError, ResponseTooLargeError, ServerError
from toolweave.providers import RetryPolicy
from toolweave.providers._http import DEFAULT_MAX_RESPONSE_BYTES, ERROR_BODY_LIMIT

HERE = Path(__file__).parent
HUGE = 300 * 1024 * 1024

CLIENT = """
import json, sys
sys.path.insert(0, {here!r})
from http_faults import build_model, run
from toolweave.exceptions import ProviderError
from toolweave.providers import RetryPolicy

def peak_mb():  # VmHWM: ru_maxrss would start at the parent's peak (kept across fork and exec)
    status = open('/proc/self/status').read()
    return int(status.split('VmHWM:')[1].split()[0]) / 1024

model = build_model('openai', {url!r}, retry=RetryPolicy(max_retries=0))
with open('/proc/self/clear_refs', 'w') as f:
    f.write('5')  # reset the peak to the current RSS
before = peak_mb()
try:
    run(model, {mode!r})
    outcome = ['answered', None]
except ProviderError as error:
    outcome = [type(error).__name__, getattr(error, 'limit', None)]
growth = peak_mb() - before
model.close()
print(json.dumps({{'outcome': outcome, 'growth_mb': growth}}))
"""


def flood(status: int = 200, declare: int | None = None, total: int | None = HUGE):
    def behaviour(conn: Conn, request: Request | None) -> None:
        conn.send(response_head(status, length=declare) + b'{"choices": [], "pad": "')
        conn.flood(total)

    return behaviour


def measure(url: str, mode: str) -> dict:
    script = CLIENT.format(here=str(HERE), url=url, mode=mode)
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not Path('/proc/self/clear_refs').exists(), reason='peak RSS measured through Linux /proc')
@pytest.mark.parametrize('mode', ['call', 'acall'])
def test_a_300_mb_answer_fails_typed_with_bounded_memory(mode: str) -> None:
    with FaultServer(flood()) as server:
        figures = measure(server.url, mode)
        sent = server.connections[0].sent
    print(mode, figures, f'sent {sent / 2**20:.0f} MiB')
    assert figures['outcome'] == ['ResponseTooLargeError', DEFAULT_MAX_RESPONSE_BYTES]
    assert figures['growth_mb'] < 100, figures  # the limit is 32 MiB; before: 946 MB for 300 MB
    assert sent < 128 * 1024 * 1024, sent  # the client stopped reading near the limit


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream'])
def test_a_huge_error_body_is_read_only_as_a_prefix(mode: str) -> None:
    with FaultServer(flood(500)) as server:
        model = build_model('openai', server.url, retry=RetryPolicy(max_retries=0))
        with pytest.raises(ServerError) as info:
            run(model, mode)
        model.close()
        assert server.connections[0].client_closed(5)
        sent = server.connections[0].sent
    assert len(info.value.body or '') <= 500
    assert sent < 64 * 1024 * 1024, sent  # ERROR_BODY_LIMIT is read, then the connection is closed
    assert ERROR_BODY_LIMIT == 64 * 1024


@pytest.mark.parametrize('mode', ['call', 'acall'])
def test_a_declared_length_over_the_limit_fails_before_reading(mode: str) -> None:
    with FaultServer(flood(declare=10**10, total=None)) as server:
        model = build_model('openai', server.url, max_response_bytes=1024 * 1024)
        started = time.monotonic()
        with pytest.raises(ResponseTooLargeError) as info:
            run(model, mode)
        model.close()
    assert time.monotonic() - started < 5
    assert info.value.limit == 1024 * 1024
    assert 'declares 10000000000 bytes' in str(info.value)


@pytest.mark.parametrize('mode', ['call', 'acall'])
def test_the_limit_is_exact_and_configurable(mode: str) -> None:
    answer = ANSWERS['openai']
    limit = 1000
    bodies = [answer + b' ' * (limit - len(answer)), answer + b' ' * (limit + 1 - len(answer))]

    def respond(conn: Conn, request: Request | None) -> None:
        body = bodies.pop(0)
        conn.send(response_head() + body)  # close-delimited: no Content-Length to check first

    with FaultServer(respond) as server:
        model = build_model('openai', server.url, max_response_bytes=limit, retry=RetryPolicy(max_retries=0))
        assert run(model, mode).text == 'hi'
        with pytest.raises(ResponseTooLargeError, match=f'more than max_response_bytes={limit}; reading stopped'):
            run(model, mode)
        model.close()


@pytest.mark.parametrize('mode', ['call', 'acall'])
def test_a_compressed_bomb_is_bounded_by_its_decoded_size(mode: str) -> None:
    bomb = gzip.compress(b'{"choices": [], "pad": "' + b' ' * (20 * 1024 * 1024) + b'"}')
    assert len(bomb) < 100 * 1024

    def respond(conn: Conn, request: Request | None) -> None:
        conn.send(response_head(headers={'Content-Encoding': 'gzip'}, length=len(bomb)) + bomb)

    with FaultServer(respond) as server:
        model = build_model('openai', server.url, max_response_bytes=1024 * 1024)
        with pytest.raises(ResponseTooLargeError, match='more than max_response_bytes=1048576; reading stopped'):
            run(model, mode)
        model.close()


def test_the_limit_must_be_a_positive_int() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match='max_response_bytes'):
            build_model('openai', 'http://127.0.0.1:9', max_response_bytes=bad)
    assert issubclass(ResponseTooLargeError, ProviderError)
    assert json.loads(ANSWERS['openai'])['choices']
