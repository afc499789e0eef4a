"""Twin of ``rust/stream/formats/anthropic.rs``: ``anthropic`` Messages API stream events."""

from __future__ import annotations

from typing import Any

from toolweave._reference.stream.message import Message, _int, _str, compact, norm

__all__ = ['Anthropic']


class Anthropic:
    """``anthropic``: Messages API stream events."""

    def __init__(self, m: Message) -> None:
        self.m = m
        self.by_index: dict[int, dict[str, Any]] = {}

    def apply(self, chunk: dict[str, Any]) -> bool:
        """Fold one event in; False when it is a provider error."""
        m = self.m
        kind = chunk.get('type')
        if kind == 'error':
            return False
        if kind == 'message_start':
            message = chunk.get('message')
            if isinstance(message, dict):
                m.set_id_model(message.get('id'), message.get('model'))
                if isinstance(message.get('usage'), dict):
                    m.usage = norm(message['usage'])
        elif kind == 'content_block_start':
            self._start(chunk)
        elif kind == 'content_block_delta':
            self._delta(chunk)
        elif kind == 'message_delta':
            delta = chunk.get('delta')
            if isinstance(delta, dict) and isinstance(delta.get('stop_reason'), str):
                m.finish_reason = delta['stop_reason']
            usage = chunk.get('usage')
            if isinstance(usage, dict):
                if m.usage is None:
                    m.usage = {}
                for k, v in usage.items():
                    if v is not None:
                        m.usage[k] = norm(v)
        elif kind == 'message_stop':
            m.done = True
        return True

    def _start(self, chunk: dict[str, Any]) -> None:
        index = _int(chunk.get('index'))
        block = chunk.get('content_block')
        if index is None or not isinstance(block, dict):
            return
        rec: dict[str, Any] = {'start': norm(block), 'parts': [], 'signature': [], 'call': None, 'json': False}
        kind = block.get('type')
        if kind == 'tool_use':
            rec['call'] = self.m.new_call(_str(block.get('id')) or '', _str(block.get('name')) or '')
            start_input = block.get('input')
            if isinstance(start_input, dict) and start_input:
                rec['call']['final'] = compact(start_input)
        elif kind == 'text' and _str(block.get('text')):
            self.m.text.append(block['text'])
        elif kind == 'thinking' and _str(block.get('thinking')):
            self.m.add_reasoning(block['thinking'])
        self.by_index[index] = rec
        self.m.blocks.append(rec)

    def _delta(self, chunk: dict[str, Any]) -> None:
        rec = self.by_index.get(_int(chunk.get('index')))  # type: ignore[arg-type]
        delta = chunk.get('delta')
        if rec is None or not isinstance(delta, dict):
            return
        kind = delta.get('type')
        if kind == 'text_delta' and isinstance(delta.get('text'), str):
            self.m.text.append(delta['text'])
            rec['parts'].append(delta['text'])
        elif kind == 'thinking_delta' and isinstance(delta.get('thinking'), str):
            self.m.add_reasoning(delta['thinking'])
            rec['parts'].append(delta['thinking'])
        elif kind == 'signature_delta' and isinstance(delta.get('signature'), str):
            rec['signature'].append(delta['signature'])
        elif kind == 'input_json_delta' and isinstance(delta.get('partial_json'), str):
            rec['parts'].append(delta['partial_json'])
            call = rec['call']
            if call is not None:
                if not rec['json']:
                    call['final'] = None
                call['arguments'].append(delta['partial_json'])
            rec['json'] = True

    def blocks(self) -> list[dict[str, Any]]:
        """The content blocks as JSON objects (``anthropic_blocks`` in Rust)."""
        out = []
        for rec in self.m.blocks:
            block = norm(rec['start'])
            joined = ''.join(rec['parts'])
            kind = block.get('type')
            if kind == 'text':
                block['text'] = (_str(block.get('text')) or '') + joined
            elif kind == 'thinking':
                block['thinking'] = (_str(block.get('thinking')) or '') + joined
                block['signature'] = (_str(block.get('signature')) or '') + ''.join(rec['signature'])
            elif rec['json'] or kind in ('tool_use', 'server_tool_use', 'mcp_tool_use'):
                block['input_raw'] = joined
            out.append(block)
        return out
