"""A durable worker process for the tests: ``worker_main.py <target> <task queue> [redis_url]``; prints ``ready``."""

from __future__ import annotations

import asyncio
import sys

from durable_app import build_registry
from toolweave.durable import connect, create_worker


async def main(target: str, task_queue: str, extra: list[str]) -> None:
    registry = build_registry()
    if extra:  # a Redis URL: the shared chat memory of the alternating-workers test
        from toolweave.memory import MessageWindowChatMemory
        from toolweave.memory.redis import RedisChatMemoryRepository

        registry.add_memory('chat', MessageWindowChatMemory(RedisChatMemoryRepository(url=extra[0], key_prefix='tw:')))
    client = await connect(target)
    async with create_worker(client, registry, task_queue=task_queue):
        print('ready', flush=True)
        await asyncio.Event().wait()


if __name__ == '__main__':
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
