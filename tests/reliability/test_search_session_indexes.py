"""Promise: each tool-search session searches only its own tools, and evicted or replaced indexes are cleared.

Attack: 8 threads search through one ``ToolSearchSessions`` with a bound of 5 (constant eviction), each
on its own sessions whose tool sets change every few steps, plus one session that every thread uses
with a different tool set (its index is rebuilt under the others' feet). Every search must return
exactly the tool set its caller asked for; at the end every index that is no session's current one
must have been cleared, and the bound must hold.
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator

import pytest
from toolweave.search import LexicalToolIndex, RegexToolIndex
from toolweave.search.sessions import ToolSearchSessions
from toolweave.tools import ToolDefinition

THREADS = 8
STEPS = 150


def tool_set(owner: str, version: int) -> tuple[ToolDefinition, ...]:
    return tuple(ToolDefinition(f'{owner}_v{version}_t{j}', f'common tool {j} of {owner}') for j in range(3))


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads every microsecond, so the races have a chance to happen."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.mark.usefixtures('busy_switching')
def test_concurrent_sessions_search_only_their_own_tools_and_leak_no_index() -> None:
    sessions = ToolSearchSessions(max_sessions=5)
    made: list[RegexToolIndex | LexicalToolIndex] = []
    made_lock = threading.Lock()

    def factory() -> RegexToolIndex | LexicalToolIndex:
        with made_lock:
            made.append(RegexToolIndex() if len(made) % 2 else LexicalToolIndex())
            return made[-1]

    start = threading.Barrier(THREADS)
    problems: list[str] = []

    def worker(number: int) -> None:
        rng = random.Random(number)
        start.wait()
        for step in range(STEPS):
            shared = rng.random() < 0.3
            session_id = 'shared' if shared else f'w{number}:s{rng.randrange(3)}'
            definitions = tool_set(f'w{number}', step // 10 if not shared else 0)
            with sessions.using_index(session_id, definitions, factory) as index:
                found = sorted(r.name for r in index.search('common', 10))
            if found != sorted(d.name for d in definitions):
                problems.append(f'{session_id} step {step}: asked for {definitions[0].name}..., got {found}')
            if len(sessions) > sessions.max_sessions:
                problems.append(f'{len(sessions)} sessions, bound {sessions.max_sessions}')

    def guarded(number: int) -> None:
        try:
            worker(number)
        except Exception as error:  # noqa: BLE001 - a thread's exception would otherwise only be printed
            problems.append(f'w{number} raised {error!r}')

    threads = [threading.Thread(target=guarded, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert problems == []
    assert len(sessions) == 5
    live = {
        id(index)
        for session_id in ['shared', *(f'w{n}:s{k}' for n in range(THREADS) for k in range(3))]
        if (index := sessions.index(session_id)) is not None
    }
    leaked = [index for index in made if id(index) not in live and len(index) > 0]
    assert leaked == [] and len(made) > 2 * THREADS
    sessions.clear()
    assert all(len(index) == 0 for index in made)
