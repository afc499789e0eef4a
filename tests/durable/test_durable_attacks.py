"""Attacks on durable runs: content parts over the payload limit or silently dropped, decisions sent to a finished
run or hostile decisions, against a real Temporal dev server (tests/durable/conftest.py).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from test_durable_run import durable, registry_with
from toolweave.approvals import Approve, DeferredResult, Deny
from toolweave.chat.content import Media
from toolweave.chat.messages import AssistantMessage, ToolCall, ToolResponseMessage, UserMessage
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.durable import DurableRunError
from toolweave.tools import tool

PNG = b'\x89PNG\r\n\x1a\n' + b'\x01' * 1000


@tool
def small_chart(x: int) -> list[object]:
    """A caption and a 1 KB image."""
    return [f'chart {x}', Media('image/png', PNG, 'chart.png')]


@tool
def big_chart(x: int) -> bytes:
    """A 3 MB image: over the test registry's 4096-byte limit (and over Temporal's 2 MiB payload limit)."""
    return b'\x89PNG\r\n\x1a\n' + b'\x02' * 3_000_000


class MediaModel:
    """Calls ``tool`` once, then answers with what the tool response carried: text, error flag and media."""

    def __init__(self, tool_name: str) -> None:
        self.tool_name = tool_name

    def _answer(self, prompt: Prompt) -> ChatResponse:
        start = max(i for i, m in enumerate(prompt.messages) if isinstance(m, UserMessage))
        done = [r for m in prompt.messages[start:] if isinstance(m, ToolResponseMessage) for r in m.responses]
        if not done:
            call = ToolCall('call_0', 'function', self.tool_name, '{"x": 1}')
            return ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),))
        seen = [(r.response_data, r.is_error, [(p.media_type, len(p.data), p.name) for p in r.media]) for r in done]
        return ChatResponse((Generation(AssistantMessage(repr(seen)), 'stop'),))

    def call(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def stream(self, prompt: Prompt):  # pragma: no cover - durable runs call acall
        yield self._answer(prompt)


def run_media(target: str, task_queue: str, tool_name: str, the_tool: Any) -> str:
    registry = registry_with('media', MediaModel(tool_name), the_tool)

    async def main() -> str:
        async with durable(target, task_queue, registry) as tw:
            response = await tw.run('go', model='media', tools=[tool_name])
            return response.text

    return asyncio.run(main())


def test_a_tools_image_reaches_the_model_as_in_process(temporal_target, task_queue):
    # was dropped silently: the outcome carried the ContentResult's text only
    text = run_media(temporal_target, task_queue, 'small_chart', small_chart)
    assert text == repr([('chart 1', False, [('image/png', len(PNG), 'chart.png')])])


def test_an_image_over_the_payload_limit_reaches_the_model_as_an_error_text(temporal_target, task_queue):
    # was 0 bytes counted (the text is empty), so 4 MB of base64 went to Temporal and the activity failed
    started = time.monotonic()
    text = run_media(temporal_target, task_queue, 'big_chart', big_chart)
    assert time.monotonic() - started < 60
    size = (3_000_008 + 2) // 3 * 4
    expected = f"Tool 'big_chart' returned {size} bytes, more than a durable run carries (max_tool_result_bytes=4096)."
    assert text == repr([(expected, True, [])])


async def _paused(tw: Any) -> tuple[Any, str]:
    run = await tw.start('go', model='approval', tools=['first', 'guarded'])
    deadline = time.monotonic() + 30
    while not (pending := await run.pending()):
        assert time.monotonic() < deadline, 'the run did not pause'
        await asyncio.sleep(0.1)
    return run, pending[0].id


def test_hostile_decisions_are_refused_and_the_run_still_resumes(temporal_target, task_queue, tool_dir):
    async def main() -> tuple[list[str], str]:
        async with durable(temporal_target, task_queue) as tw:
            run, call_id = await _paused(tw)
            refused = []
            for wrong in ({call_id: Deny(5)}, {call_id: DeferredResult('x', is_error='no')}, {call_id: 'yes'}):
                with pytest.raises((DurableRunError, TypeError)) as raised:
                    await run.decide(wrong)  # type: ignore[arg-type]
                error = raised.value
                refused.append(error.error_type if isinstance(error, DurableRunError) else type(error).__name__)
            await run.decide({call_id: Approve()})
            return refused, (await run.result()).text

    refused, text = asyncio.run(main())
    assert refused[:2] == ['InvalidDecisionError', 'InvalidDecisionError']
    assert refused[2] in ('InvalidDecisionError', 'TypeError')
    assert text == 'answer: first=10 | guarded=50'


def test_a_decision_sent_to_a_finished_run_is_a_typed_error(temporal_target, task_queue, tool_dir):
    async def main() -> str:
        async with durable(temporal_target, task_queue) as tw:
            run, call_id = await _paused(tw)
            await run.decide({call_id: Deny()})
            await run.result()
            with pytest.raises(DurableRunError) as raised:
                await asyncio.wait_for(run.decide({call_id: Approve()}), 30)
            return raised.value.error_type

    assert asyncio.run(main()) == 'RunNotPausedError'


def test_a_worker_killed_during_a_model_call_is_replaced_within_the_heartbeat(
    temporal_target, task_queue, tool_dir, worker_processes
):
    # the model activity did not heartbeat: its retry waited the model's whole timeout (600 s by default)
    from durable_app import GatedModel, first
    from test_durable_crash import _log_lines, _wait_for
    from test_durable_run import in_process
    from toolweave.durable import DurableClient, connect

    one = worker_processes()

    async def start() -> str:
        tw = DurableClient(await connect(temporal_target), task_queue=task_queue)
        return (await tw.start('go', model='gated', tools=['first'])).id

    run_id = asyncio.run(start())
    _wait_for(lambda: _log_lines(tool_dir, 'model') == [str(one.pid)])  # the answer round's call is running
    one.kill()
    (tool_dir / 'go').touch()
    two = worker_processes()
    started = time.monotonic()

    async def finish() -> Any:
        tw = DurableClient(await connect(temporal_target), task_queue=task_queue)
        return await asyncio.wait_for(tw.get(run_id).result(), 60)

    response = asyncio.run(finish())
    assert time.monotonic() - started < 45  # heartbeat_timeout 2 s in the tests, not the 600 s model timeout
    assert _log_lines(tool_dir, 'first') == [f'{one.pid} 1']  # the tool ran once, before the kill
    assert _log_lines(tool_dir, 'model') == [str(one.pid), str(two.pid)]
    expected, _ = in_process(GatedModel(((('first', '{"x": 1}'),),)), first)
    assert response.text == expected.text == 'answer: first=10'
