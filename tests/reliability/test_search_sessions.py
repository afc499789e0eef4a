"""README promise: tool-search sessions are kept "safely across threads" (LRU of ``max_sessions``).

Attack: 8 threads hammer one ``ToolSearchSessions`` with adds, reads, clears and evictions; each
thread owns its own session ids, so every read can be checked against what that thread wrote.
"""

from __future__ import annotations

import threading

from toolweave.advisors.tool_search import ToolSearchSessions

THREADS = 8
ROUNDS = 400


def _is_own_run(names: tuple[str, ...], owner: str) -> bool:
    """A session's names are steps of ``owner`` 3 apart (each writer cycles over 3 sessions); eviction or a
    clear may only cut the start of the run, never mix in another writer's names or lose one in between."""
    numbers = [int(name.split('-')[1]) for name in names if name.startswith(f'{owner}-')]
    if len(numbers) != len(names):
        return False
    return numbers == list(range(numbers[0], numbers[0] + 3 * len(numbers), 3)) if numbers else True


def test_sessions_under_concurrent_writers_keep_bound_and_never_mix() -> None:
    sessions = ToolSearchSessions(max_sessions=12)
    start = threading.Barrier(THREADS)
    problems: list[str] = []

    def writer(worker: int) -> None:
        try:
            write(f'w{worker}')
        except Exception as error:  # noqa: BLE001 - a thread's exception would otherwise only be printed
            problems.append(f'w{worker} raised {error!r}')

    def write(owner: str) -> None:
        start.wait()
        for step in range(ROUNDS):
            session_id = f'{owner}:s{step % 3}'
            sessions.add(session_id, [f'{owner}-{step}'])
            seen = sessions.discovered(session_id)
            if not _is_own_run(seen, owner) or (seen and seen[-1] != f'{owner}-{step}'):
                problems.append(f'{session_id} after step {step}: {seen}')
            if len(sessions) > sessions.max_sessions:
                problems.append(f'{len(sessions)} sessions kept, bound {sessions.max_sessions}')
            if step % 97 == 0:
                sessions.clear(f'{owner}:s{(step + 1) % 3}')

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert problems == []
    assert len(sessions) == 12
