"""A small service for the cross-process tests: one process pauses a run, another resumes it.

    python approval_app.py pause  <sqlite|redis> <path-or-url> <ledger>            -> prints the run id
    python approval_app.py resume <sqlite|redis> <path-or-url> <ledger> <run id> [--wait <file>]
        -> prints the answer, or the error's class name (exit 3)

The ``transfer`` tool appends to ``<ledger>`` so the tests can count how often it really ran.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from toolweave import ChatClient, tool
from toolweave.approvals import Approve
from toolweave.chat import Prompt, ToolResponseMessage
from toolweave.providers import ScriptedChatModel
from toolweave.runstate import RedisRunStateStore, RunStateError, RunStateStore, SqliteRunStateStore

S = ScriptedChatModel
LEDGER = Path(sys.argv[4]) if len(sys.argv) > 4 else Path('ledger.txt')


@tool(requires_approval=lambda call, context: '"amount":500' in call.arguments)
def transfer(amount: int, to: str) -> str:
    """Send money."""
    with LEDGER.open('a', encoding='utf-8') as ledger:
        ledger.write(f'{amount} {to}\n')
    return f'sent {amount} to {to}'


def answer(prompt: Prompt) -> object:
    last = prompt.messages[-1]
    assert isinstance(last, ToolResponseMessage)
    return S.text_response('done: ' + last.responses[0].response_data, usage=S.usage(2, 2))


def store_of(kind: str, where: str) -> RunStateStore:
    return SqliteRunStateStore(where) if kind == 'sqlite' else RedisRunStateStore(url=where)


def main() -> int:
    command, kind, where = sys.argv[1:4]
    if command == 'pause':
        model = S([S.tool_call_response('transfer', {'amount': 500, 'to': 'bob'}, usage=S.usage(5, 5))])
        client = ChatClient.builder(model).run_state_store(store_of(kind, where)).build()
        response = client.prompt('Send 500 to Bob').tools(transfer).call()
        state = response.run_state()
        assert state is not None
        print(state.run_id)
        return 0
    run_id = sys.argv[5]
    if len(sys.argv) > 7 and sys.argv[6] == '--wait':
        print('ready', flush=True)
        gate = Path(sys.argv[7])
        while not gate.exists():
            time.sleep(0.005)
    client = ChatClient.builder(S([answer])).run_state_store(store_of(kind, where)).build()
    try:
        state = store_of(kind, where).load(run_id)
        response = client.resume(run_id, {p.id: Approve() for p in state.pending}).tools(transfer).call()
    except RunStateError as error:
        print(type(error).__name__)
        return 3
    chat = response.chat_response()
    print(response.content(), chat.usage.total_tokens if chat.usage else None)
    return 0


if __name__ == '__main__':
    sys.exit(main())
