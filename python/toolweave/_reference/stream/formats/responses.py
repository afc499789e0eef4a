"""Twin of ``rust/stream/formats/responses.rs``: ``openai-responses`` stream events."""

from __future__ import annotations

from typing import Any

from toolweave._reference.stream.message import Message, _int, _str, norm

__all__ = ['Responses']


class Responses:
    """``openai-responses``: Responses API stream events."""

    def __init__(self, m: Message) -> None:
        self.m = m
        self.by_output: dict[int, dict[str, Any]] = {}

    def apply(self, chunk: dict[str, Any]) -> bool:
        """Fold one event payload in; False when it is a provider error."""
        m = self.m
        kind = chunk.get('type')
        if kind == 'error':
            return False
        if kind in (
            'response.created',
            'response.in_progress',
            'response.completed',
            'response.incomplete',
            'response.failed',
        ):
            response = chunk.get('response')
            if isinstance(response, dict):
                m.set_id_model(response.get('id'), response.get('model'))
                if kind != 'response.created' and kind != 'response.in_progress':
                    m.done = True
                    status = _str(response.get('status'))
                    m.finish_reason = status or kind.removeprefix('response.')
                    if isinstance(response.get('usage'), dict):
                        m.usage = norm(response['usage'])
        elif kind in ('response.output_item.added', 'response.output_item.done'):
            item = chunk.get('item')
            if isinstance(item, dict) and item.get('type') == 'function_call':
                self._item(_int(chunk.get('output_index')), item, kind.endswith('done'))
        elif kind == 'response.function_call_arguments.delta':
            call = self.by_output.get(_int(chunk.get('output_index')))  # type: ignore[arg-type]
            if call is not None and isinstance(chunk.get('delta'), str):
                call['arguments'].append(chunk['delta'])
        elif kind == 'response.function_call_arguments.done':
            call = self.by_output.get(_int(chunk.get('output_index')))  # type: ignore[arg-type]
            if call is not None and isinstance(chunk.get('arguments'), str):
                call['final'] = chunk['arguments']
        elif kind == 'response.output_text.delta' and isinstance(chunk.get('delta'), str):
            m.text.append(chunk['delta'])
        elif kind in ('response.reasoning_summary_text.delta', 'response.reasoning_text.delta') and isinstance(
            chunk.get('delta'), str
        ):
            m.add_reasoning(chunk['delta'])
        return True

    def _item(self, output_index: int | None, item: dict[str, Any], done: bool) -> None:
        call = self.by_output.get(output_index) if output_index is not None else None
        if call is None:
            call = self.m.new_call(_str(item.get('call_id')) or '', _str(item.get('name')) or '')
            call['extra']['item_id'] = _str(item.get('id')) or ''
            if output_index is not None:
                self.by_output[output_index] = call
        if not call['id']:
            call['id'] = _str(item.get('call_id')) or ''
        if not call['name']:
            call['name'] = _str(item.get('name')) or ''
        arguments = _str(item.get('arguments'))
        if done and arguments is not None:
            call['final'] = arguments
