"""BaseExceptions raised by tools propagate (DESIGN section 4), in every path, leaving nothing stray behind.

Attack: a tool raises ``GeneratorExit``, ``KeyboardInterrupt``, ``SystemExit`` or
``asyncio.CancelledError``; the tool is a plain sync function (run in the caller's thread by
``call()``, on the worker threads by ``acall()``/``stream()``), a sync function with a timeout (always
on the worker threads), an async function (with and without a timeout), or a sync
``FunctionToolCallback``, alone in its turn or next to a well-behaved tool. The same exception must come out of ``call()``, ``acall()`` and ``stream()``,
and no asyncio error may be logged or raised as unraisable afterwards ("Task exception was never
retrieved", "Future exception was never retrieved", "coroutine ... was never awaited", unclosed
resources), even after a garbage collection. A later request must still work.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tool_faults import MODES, calls, run
from toolweave import ChatClient, tool
from toolweave.providers import ScriptedChatModel
from toolweave.tools import FunctionToolCallback

S = ScriptedChatModel
RAISED = {
    'GeneratorExit': GeneratorExit,
    'KeyboardInterrupt': KeyboardInterrupt,
    'SystemExit': SystemExit,
    'CancelledError': asyncio.CancelledError,
}
KINDS = ('sync', 'sync-timeout', 'async', 'async-timeout', 'function')


def raising_tool(kind: str, error: type[BaseException]) -> Any:
    def fail() -> None:
        raise error('raised by the tool')

    if kind == 'sync':

        @tool(name='bad')
        def bad_sync(x: int) -> str:
            fail()
            return 'never'

        return bad_sync
    if kind == 'sync-timeout':

        @tool(name='bad', timeout=10)
        def bad_timed(x: int) -> str:
            fail()
            return 'never'

        return bad_timed
    if kind.startswith('async'):

        @tool(name='bad', timeout=10 if kind == 'async-timeout' else None)
        async def bad_async(x: int) -> str:
            await asyncio.sleep(0)
            fail()
            return 'never'

        return bad_async
    return FunctionToolCallback.builder('bad', lambda args: fail()).build()


@tool
def good(x: int) -> str:
    return f'good {x}'


@pytest.fixture
def stray() -> Iterator[Callable[[], list[str]]]:
    """A function returning everything reported on the side so far (after a garbage collection):
    asyncio log records, warnings and unraisable exceptions."""
    found: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(f'log {record.name}: {record.getMessage()}')

    handler = Catch(logging.DEBUG)
    asyncio_logger = logging.getLogger('asyncio')
    asyncio_logger.addHandler(handler)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: found.append(
        f'unraisable: {unraisable.exc_value!r} in {unraisable.object!r}'
    )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')

            def leftovers() -> list[str]:
                gc.collect()
                return found + [f'warning: {w.message}' for w in caught]

            yield leftovers
    finally:
        sys.unraisablehook = previous_hook
        asyncio_logger.removeHandler(handler)


@pytest.mark.timeout(60)
@pytest.mark.parametrize('alone', [False, True], ids=['with-another-tool', 'alone'])
@pytest.mark.parametrize('name', list(RAISED))
@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('mode', MODES)
def test_base_exceptions_from_tools_propagate_without_stray_errors(mode, kind, name, alone, stray):
    error = RAISED[name]
    turn = [('bad', {'x': 2})] if alone else [('good', {'x': 1}), ('bad', {'x': 2})]
    model = ScriptedChatModel([calls(turn), S.text_response('unreachable')])
    spec = ChatClient.create(model).prompt('go').tools(good, raising_tool(kind, error))
    with pytest.raises(error) as info:
        run(spec, mode)
    assert info.type is error
    assert str(info.value) == 'raised by the tool'
    later = ScriptedChatModel([S.tool_call_response('good', {'x': 3}), S.text_response('still fine')])
    assert run(ChatClient.create(later).prompt('go').tools(good), mode)[0] == 'still fine'
    assert stray() == []
