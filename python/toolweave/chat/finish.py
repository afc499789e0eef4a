"""Finish reasons: each provider's own values mapped to the common ones (as Spring AI's ``ChatGenerationMetadata``).

One table per stream format, used by the providers for whole answers and by the stream aggregators
(the Rust core holds the same tables; the pure-Python twin imports these).
"""

from __future__ import annotations

__all__ = ['FINISH_TABLES', 'normalize_finish_reason']

_ANTHROPIC_FINISH = {
    'end_turn': 'stop',
    'stop_sequence': 'stop',
    'max_tokens': 'length',
    'model_context_window_exceeded': 'length',
    'tool_use': 'tool_calls',
    'refusal': 'content_filter',
}
_GEMINI_FINISH = {
    'STOP': 'stop',
    'MAX_TOKENS': 'length',
    'SAFETY': 'content_filter',
    'RECITATION': 'content_filter',
    'BLOCKLIST': 'content_filter',
    'PROHIBITED_CONTENT': 'content_filter',
    'SPII': 'content_filter',
    'IMAGE_SAFETY': 'content_filter',
    'MALFORMED_FUNCTION_CALL': 'error',
    'UNEXPECTED_TOOL_CALL': 'error',
}
_RESPONSES_FINISH = {'completed': 'stop', 'incomplete': 'length', 'failed': 'error', 'cancelled': 'error'}
_OPENAI_FINISH = {'function_call': 'tool_calls'}
FINISH_TABLES: dict[str, dict[str, str]] = {
    'openai-chat': _OPENAI_FINISH,
    'anthropic': _ANTHROPIC_FINISH,
    'gemini': _GEMINI_FINISH,
    'openai-responses': _RESPONSES_FINISH,
    'ollama': {},
}


def normalize_finish_reason(format: str, native: str | None, has_tool_calls: bool) -> str | None:
    """The common finish reason (``stop``, ``length``, ``tool_calls``, ``content_filter``, ``error``).

    Unknown native values pass through unchanged; ``stop`` becomes ``tool_calls`` when calls were
    made (Ollama and Gemini say ``stop`` after a tool call).
    """
    if native is None:
        return None
    reason = FINISH_TABLES[format].get(native, native)
    if reason == 'stop' and has_tool_calls:
        return 'tool_calls'
    return reason
