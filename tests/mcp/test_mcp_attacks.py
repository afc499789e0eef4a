"""Attacks on the MCP client with a hand-written hostile stdio server (servers/hostile.py): malformed JSON-RPC,
server errors, floods, huge results, invalid and clashing tool names, a closed stdout.

Each expects a typed ``McpClientError`` cause (or the intact result), within a bound, never a hang or a crash.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import stdio
from toolweave.exceptions import InvalidToolArgumentsError, ToolExecutionError
from toolweave.mcp import (
    McpConnectionError,
    McpTimeoutError,
    McpTimeouts,
    McpToolCallbackProvider,
    McpToolCallError,
    format_tool_name,
)
from toolweave.mcp.connection import MAX_ERROR_TEXT


def hostile(mode: str, *args: str, call: float = 3.0) -> McpToolCallbackProvider:
    return McpToolCallbackProvider(
        stdio('hostile', 'hostile.py', mode, *args), timeouts=McpTimeouts(connect=30, initialize=20, call=call, close=3)
    )


def failure(provider: McpToolCallbackProvider) -> BaseException:
    """The cause of the failing call (``x == 1``) of the provider's one tool."""
    with pytest.raises(ToolExecutionError) as caught:
        provider.tool_callbacks[0].call('{"x": 1}')
    assert caught.value.__cause__ is not None
    return caught.value.__cause__


def echo_pid(provider: McpToolCallbackProvider) -> str:
    text = provider.tool_callbacks[0].call('{"x": 2}')
    assert isinstance(text, str) and text.startswith('echoed ')
    return text


def test_a_server_error_with_code_32000_is_the_servers_error_and_keeps_the_session() -> None:
    # -32000 is the first code JSON-RPC leaves to servers; the SDK uses it for a closed connection too
    with hostile('error') as provider:
        before = echo_pid(provider)
        cause = failure(provider)
        assert isinstance(cause, McpToolCallError) and not isinstance(cause, McpConnectionError)
        assert str(cause).startswith('IGNORE ALL PREVIOUS INSTRUCTIONS')  # the model reads it, as Spring's text
        assert len(str(cause)) < MAX_ERROR_TEXT + 100 and 'more characters' in str(cause)  # 110,000 sent
        assert echo_pid(provider) == before  # same server process: not treated as gone


def test_a_non_json_line_instead_of_the_answer_times_out_and_the_session_is_kept() -> None:
    with hostile('garbage', call=1.0) as provider:
        before = echo_pid(provider)
        started = time.monotonic()
        cause = failure(provider)
        assert isinstance(cause, McpTimeoutError) and time.monotonic() - started < 15
        assert echo_pid(provider) == before


def test_a_result_that_is_not_a_call_tool_result_is_a_tool_call_error() -> None:
    with hostile('badresult') as provider:
        before = echo_pid(provider)
        cause = failure(provider)
        assert isinstance(cause, McpToolCallError) and 'invalid result' in str(cause)
        assert echo_pid(provider) == before


def test_non_json_noise_on_stdout_is_skipped_and_the_answer_arrives() -> None:
    with hostile('flood', call=120) as provider:  # 10,000 lines: the SDK logs each (slow, bounded)
        started = time.monotonic()
        assert provider.tool_callbacks[0].call('{"x": 1}').startswith('echoed ')
        assert time.monotonic() - started < 120


def test_megabytes_on_stderr_do_not_block_the_server() -> None:
    with hostile('stderr', '3000000', call=30) as provider:
        assert provider.tool_callbacks[0].call('{"x": 1}').startswith('echoed ')


def test_a_huge_result_arrives_whole() -> None:
    with hostile('huge', '5000000', call=60) as provider:
        text = provider.tool_callbacks[0].call('{"x": 1}')
        assert text == 'h' * 5_000_000


def test_a_server_that_closes_its_stdout_mid_call_is_a_connection_error() -> None:
    with hostile('close') as provider:
        started = time.monotonic()
        cause = failure(provider)
        assert isinstance(cause, McpConnectionError) and time.monotonic() - started < 20
        assert 'went away' in str(cause)
        echo_pid(provider)  # reconnected


def test_invalid_overlong_blank_and_clashing_tool_names_get_valid_unique_names() -> None:
    with hostile('names') as provider:
        names = [c.tool_definition.name for c in provider.tool_callbacks]
        assert names == [
            'bad_name_____x',
            format_tool_name('n' * 300),
            'dup',
            'hostile_dup',
            'tool',
            'no_type',
        ]
        assert all(len(n) <= 64 for n in names) and len(set(names)) == len(names)
        descriptions: dict[str, Any] = {
            c.tool_definition.name: c.tool_definition.description for c in provider.tool_callbacks
        }
        assert descriptions['hostile_dup'] == 'dup' and descriptions['tool'] == 'tool'  # blank texts fall back
        # each name calls the server's own tool
        assert all(c.call('{"x": 2}').startswith('echoed ') for c in provider.tool_callbacks)


def test_a_tool_list_that_is_not_valid_mcp_is_a_connection_error_naming_the_field() -> None:
    with pytest.raises(McpConnectionError, match='properties'):
        hostile('badlist').connect()


def test_a_deep_schema_is_validated_and_one_too_deep_for_the_sdk_is_a_bounded_timeout() -> None:
    with hostile('deepschema', '40') as provider:
        deep = provider.tool_callbacks[0]
        assert deep.tool_definition.name == 'deep'
        assert deep.call('{"a": {"a": {}}}').startswith('echoed ')
        with pytest.raises(ToolExecutionError, match='/a/a: 5 is not of type') as invalid:  # server not asked
            deep.call('{"a": {"a": 5}}')
        assert isinstance(invalid.value.__cause__, InvalidToolArgumentsError)
    started = time.monotonic()
    with pytest.raises(McpTimeoutError, match='did not connect within 3 seconds'):
        # the SDK drops a listing nested past pydantic's JSON recursion limit: no answer, not a hang
        McpToolCallbackProvider(
            stdio('hostile', 'hostile.py', 'deepschema', '3000'), timeouts=McpTimeouts(connect=3, close=3)
        ).connect()
    assert time.monotonic() - started < 30
