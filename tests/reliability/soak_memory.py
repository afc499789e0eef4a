"""Soak of chat memory: many conversations, writer processes and threads, killed writers, Redis restarts.

``soak(seconds, seed)`` runs rounds of a few seconds until ``seconds`` have passed, alternating a
SQLite file and (when ``redis-server`` is installed) a Redis server with an fsync-always AOF, so an
acknowledged write survives a restart. In each round 2-4 writer processes and 2 threads add to
shared conversations at once: single messages, [user, assistant] pairs and [tool call, tool
response] pairs (each add logged once it returned), some to conversations with a small window, and
some run whole tool-loop turns through ``MessageChatMemoryAdvisor`` inside the loop, with tools that
fail or are unknown. Faults: writer processes SIGKILLed at random moments, the Redis server SIGKILLed
and restarted. After each round every conversation is checked:

- ``messages_lost``: messages of acknowledged adds missing from their conversation (must be 0);
- ``broken_conversations``: conversations holding a tool call without its response, a response to
  no call, half of an add, a duplicated add, or more than its window (must be 0);
- ``hung_calls``: writers that did not finish within their time plus 60 s (must be 0);
- ``typed_errors_seen``: ``redis.ConnectionError``/``TimeoutError`` the writer threads got while
  the server restarted (the writer processes retry the same way, uncounted);
- ``untyped_errors``: writers that died of any other error (a thread's exception, a process that
  exited non-zero without being SIGKILLed) (must be 0).

Run from ``tests/reliability/soak.py`` (``make soak``); ``python soak_memory.py writer ...`` is the
writer process. Never collected by pytest.
"""

from __future__ import annotations

import json
import logging
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from memory_support import RedisServer, problems
from toolweave.chat import AssistantMessage, Message, ToolCall, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.memory import (
    MessageWindowChatMemory,
    RedisChatMemoryRepository,
    SqliteChatMemoryRepository,
)
from toolweave.memory.base import WindowedChatMemoryRepository

__all__ = ['soak']

WINDOW = 12
BIG = 10**7


def _repository(store: dict[str, str]) -> WindowedChatMemoryRepository:
    if store['kind'] == 'sqlite':
        return SqliteChatMemoryRepository(store['where'])
    return RedisChatMemoryRepository(url=store['where'], key_prefix=store['prefix'], socket_timeout=5)


def _add(name: str, seq: int, shape: str) -> list[Message]:
    """One add of writer ``name``; every message carries ``name|seq|k``."""
    tag = f'{name}|{seq}'
    if shape == 'user':
        return [UserMessage(f'{tag}|0')]
    if shape == 'pair':
        return [UserMessage(f'{tag}|0'), AssistantMessage(f'{tag}|1')]
    call_id = f'{name}-{seq}'
    return [
        AssistantMessage(f'{tag}|0', (ToolCall(call_id, 'function', 'f', '{}'),)),
        ToolResponseMessage((ToolResponse(call_id, 'f', f'{tag}|1'),)),
    ]


def _tag(message: Message) -> tuple[str, int, int] | None:
    if isinstance(message, ToolResponseMessage):
        text = message.responses[0].response_data if message.responses else ''
    else:
        text = message.text or ''
    parts = text.split('|')
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])


def _turn(memory: MessageWindowChatMemory, conversation_id: str, rng: random.Random) -> None:
    """One tool-loop turn through the memory advisor inside the loop, ending in a random way."""
    from toolweave import ChatClient, tool
    from toolweave.advisors import MessageChatMemoryAdvisor, ToolCallingAdvisor
    from toolweave.providers import ScriptedChatModel as S

    @tool
    def ping(n: int) -> str:
        """Ping."""
        time.sleep(rng.random() * 0.01)  # a window for a SIGKILL while the tool runs
        if n % 7 == 3:
            raise RuntimeError('tool failed')
        return f'pong {n}'

    ending = rng.choice(['text', 'unknown', 'second'])
    script: list[Any] = [S.tool_call_response('ping', {'n': rng.randrange(100)})]
    if ending == 'unknown':
        script.append(S.tool_call_response('nope', {}))
    elif ending == 'second':
        script += [S.tool_call_response('ping', {'n': rng.randrange(100)}), S.text_response('done')]
    else:
        script.append(S.text_response('done'))
    advisor = MessageChatMemoryAdvisor(memory, order=ToolCallingAdvisor.DEFAULT_ORDER + 1)
    client = ChatClient.builder(S(script)).default_advisors(advisor).build()
    try:
        client.prompt('go').tools(ping).advisors(chat_memory_conversation_id=conversation_id).call()
    except LookupError:
        pass


def write(store: dict[str, str], name: str, conversations: Sequence[str], seed: int, seconds: float, log: Path) -> int:
    """Add to random conversations for ``seconds``; log each add once it returned. Returns typed errors seen."""
    import redis

    rng = random.Random(seed)
    repository = _repository(store)
    memories = {size: MessageWindowChatMemory(repository, max_messages=size) for size in (BIG, WINDOW)}
    errors = 0
    deadline = time.monotonic() + seconds
    with log.open('a') as out:
        seq = 0
        while time.monotonic() < deadline:
            conversation_id = rng.choice(conversations)
            memory = memories[WINDOW if conversation_id.startswith('win') else BIG]
            try:
                if conversation_id.startswith('turn'):
                    _turn(memory, conversation_id, rng)
                else:
                    messages = _add(name, seq, rng.choice(['user', 'pair', 'tool']))
                    memory.add(conversation_id, messages)
                    out.write(f'{conversation_id}\t{seq}\t{len(messages)}\n')
                    out.flush()
            except (redis.ConnectionError, redis.TimeoutError):
                errors += 1
                time.sleep(0.02)
            seq += 1
    if isinstance(repository, SqliteChatMemoryRepository):
        repository.close()
    return errors


def _check(store: dict[str, str], conversations: Sequence[str], logs: Sequence[Path], figures: dict[str, Any]) -> None:
    """Count lost messages and broken conversations of one round."""
    acknowledged: dict[str, set[tuple[str, int]]] = defaultdict(set)
    sizes: dict[tuple[str, int], int] = {}
    for log in logs:
        name = log.stem
        for line in log.read_text().splitlines() if log.exists() else []:
            conversation_id, seq, size = line.split('\t')
            acknowledged[conversation_id].add((name, int(seq)))
            sizes[(name, int(seq))] = int(size)
            figures['messages_written'] += int(size)
    repository = _repository(store)
    try:
        for conversation_id in conversations:
            stored = repository.find_by_conversation_id(conversation_id)
            broken = bool(problems(stored))
            if conversation_id.startswith('turn'):
                figures['broken_conversations'] += broken
                continue
            tags = [_tag(m) for m in stored]
            runs: list[tuple[str, int, list[int]]] = []
            for tag in tags:
                if tag is None:
                    broken = True
                elif runs and runs[-1][:2] == tag[:2]:
                    runs[-1][2].append(tag[2])
                else:
                    runs.append((tag[0], tag[1], [tag[2]]))
            seen = [(name, seq) for name, seq, _ in runs]
            broken |= len(seen) != len(set(seen))  # an add stored twice, or split apart
            windowed = conversation_id.startswith('win')
            for index, (_, _, parts) in enumerate(runs):
                whole = parts == list(range(len(parts))) and len(parts) in (1, 2)
                head_suffix = windowed and index == 0 and parts == list(range(parts[0], parts[0] + len(parts)))
                broken |= not (whole or head_suffix)
            if windowed:
                broken |= len(stored) > WINDOW
            else:
                present = set(seen)
                for add in acknowledged[conversation_id] - present:
                    figures['messages_lost'] += sizes[add]
            figures['broken_conversations'] += broken
    finally:
        if isinstance(repository, SqliteChatMemoryRepository):
            repository.close()


def _guarded(args: tuple[Any, ...], errors: list[int], figures: dict[str, Any]) -> None:
    """Run :func:`write` in a thread; an error it does not expect counts as ``untyped_errors``."""
    try:
        errors.append(write(*args))
    except BaseException:  # noqa: BLE001 - counted, and printed for the soak's reader
        figures['untyped_errors'] += 1
        traceback.print_exc()


def _round(
    store: dict[str, str],
    server: RedisServer | None,
    rng: random.Random,
    seconds: float,
    work: Path,
    figures: dict[str, Any],
) -> None:
    conversations = [
        f'{kind}-{uuid.uuid4().hex[:8]}'
        for kind in ('conv', 'conv', 'conv', 'win', 'win', 'turn')
        for _ in range(rng.randint(1, 4))
    ]
    figures['conversations'] += len(conversations)
    logs: list[Path] = []
    procs = []
    for _ in range(rng.randint(2, 4)):
        name = f'p{uuid.uuid4().hex[:6]}'
        logs.append(work / f'{name}.log')
        args = json.dumps([store, name, conversations, rng.randrange(2**32), seconds, str(logs[-1])])
        procs.append(subprocess.Popen([sys.executable, __file__, 'writer', args]))
    threads = []
    thread_errors: list[int] = []
    for _ in range(2):
        name = f't{uuid.uuid4().hex[:6]}'
        logs.append(work / f'{name}.log')
        target_args = (store, name, conversations, rng.randrange(2**32), seconds, logs[-1])
        thread = threading.Thread(target=_guarded, args=(target_args, thread_errors, figures), daemon=True)
        threads.append(thread)
        thread.start()
    figures['writers'] += len(procs) + len(threads)
    started = time.monotonic()
    faults = sorted(rng.uniform(0.5, seconds + 0.5) for _ in range(rng.randint(1, 3)))
    for at in faults:
        time.sleep(max(0.0, started + at - time.monotonic()))
        if server is not None and rng.random() < 0.5:
            server.restart()
        else:
            victim = rng.choice(procs)
            if victim.poll() is not None:
                continue
            victim.send_signal(signal.SIGKILL)
        figures['faults_injected'] += 1
    for proc in procs:
        try:
            code = proc.wait(seconds + 60)
            figures['untyped_errors'] += code not in (0, -signal.SIGKILL)
        except subprocess.TimeoutExpired:
            figures['hung_calls'] += 1
            proc.kill()
            proc.wait(10)
    for thread in threads:
        thread.join(seconds + 60)
        figures['hung_calls'] += thread.is_alive()
    figures['typed_errors_seen'] += sum(thread_errors)
    _check(store, conversations, logs, figures)


def soak(seconds: float, seed: int) -> dict[str, float | int]:
    """Run the memory soak for about ``seconds``; the figures described in the module docstring."""
    rng = random.Random(seed)
    figures: dict[str, Any] = dict.fromkeys(
        (
            'conversations',
            'writers',
            'faults_injected',
            'messages_written',
            'messages_lost',
            'broken_conversations',
            'hung_calls',
            'typed_errors_seen',
            'untyped_errors',
        ),
        0,
    )
    deadline = time.monotonic() + seconds
    quiet = logging.getLogger('toolweave.tools')  # the unknown-tool turns log a warning each
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        _soak(rng, seed, deadline, figures)
    finally:
        quiet.setLevel(level)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    figures['peak_rss_mb'] = round(max(own, children) / 1024, 1)
    return figures


def _soak(rng: random.Random, seed: int, deadline: float, figures: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix='soak-memory-') as tmp:
        work = Path(tmp)
        server: RedisServer | None = None
        try:
            try:
                (work / 'redis').mkdir()
                server = RedisServer(persist_dir=str(work / 'redis'))
                server.start()
            except FileNotFoundError:
                server = None
            stores = [{'kind': 'sqlite', 'where': str(work / 'soak.db'), 'prefix': ''}]
            if server is not None:
                stores.append({'kind': 'redis', 'where': server.url, 'prefix': f'soak:{seed}:'})
            index = 0
            while time.monotonic() < deadline - 1:
                store = stores[index % len(stores)]
                index += 1
                length = min(max(1.0, deadline - time.monotonic() - 1), rng.uniform(2, 5))
                _round(store, server if store['kind'] == 'redis' else None, rng, length, work, figures)
        finally:
            if server is not None:
                server.kill()


if __name__ == '__main__' and sys.argv[1:2] == ['writer']:
    logging.getLogger('toolweave.tools').setLevel(logging.ERROR)
    store_, name_, conversations_, seed_, seconds_, log_ = json.loads(sys.argv[2])
    write(store_, name_, conversations_, seed_, seconds_, Path(log_))
