"""Twin of ``rust/stream/formats/ollama.rs``: ``ollama`` ``/api/chat`` NDJSON lines."""

from __future__ import annotations

from typing import Any

from toolweave._reference.stream.message import Message, _str, compact, norm

__all__ = ['Ollama']


class Ollama:
    """``ollama``: native ``/api/chat`` NDJSON lines."""

    USAGE_KEYS = (
        'prompt_eval_count',
        'eval_count',
        'total_duration',
        'load_duration',
        'prompt_eval_duration',
        'eval_duration',
    )

    def __init__(self, m: Message) -> None:
        self.m = m

    def apply(self, chunk: dict[str, Any]) -> bool:
        """Fold one NDJSON object in; always True."""
        m = self.m
        m.set_id_model(None, chunk.get('model'))
        message = chunk.get('message')
        if isinstance(message, dict):
            if isinstance(message.get('content'), str):
                m.text.append(message['content'])
            if isinstance(message.get('thinking'), str):
                m.add_reasoning(message['thinking'])
            calls = message.get('tool_calls')
            if isinstance(calls, list):
                for tc in calls:
                    fn = tc.get('function') if isinstance(tc, dict) else None
                    if not isinstance(fn, dict):
                        continue
                    call = m.new_call(_str(tc.get('id')) or '', _str(fn.get('name')) or '')
                    args = fn.get('arguments')
                    call['final'] = args if isinstance(args, str) else compact(args if args is not None else {})
        if chunk.get('done') is True:
            m.done = True
            m.finish_reason = _str(chunk.get('done_reason')) or 'stop'
            usage = {k: norm(chunk[k]) for k in self.USAGE_KEYS if k in chunk}
            if usage:
                m.usage = usage
        return True

    def finalize(self) -> None:
        """Give every call without an id ``call-<index>``."""
        for c in self.m.calls:
            if not c['id']:
                c['id'] = f'call-{c["index"]}'
