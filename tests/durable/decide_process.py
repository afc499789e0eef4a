"""Approve every pending call of a paused durable run from a process of its own: ``decide_process.py <target> <queue> <run id>``."""

from __future__ import annotations

import asyncio
import sys

from toolweave.approvals import Approve
from toolweave.durable import DurableClient, connect


async def main(target: str, task_queue: str, run_id: str) -> None:
    run = DurableClient(await connect(target), task_queue=task_queue).get(run_id)
    pending = await run.pending()
    await run.decide({call.id: Approve() for call in pending})
    print(' '.join(call.name for call in pending), flush=True)


if __name__ == '__main__':
    asyncio.run(main(*sys.argv[1:4]))  # exits cleanly: connect() collects the client's cycles at exit
