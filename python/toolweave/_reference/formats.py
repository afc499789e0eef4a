"""Pure-Python twin of the per-format aggregators of ``toolweave._core`` (all but ``openai-chat``).

Each format folds parsed event payloads (JSON objects) into one :class:`Message`; the Rust core
(``rust/stream/{anthropic,responses,gemini,ollama}.rs``) follows the same rules:

- ``anthropic`` (Messages API SSE, as the anthropic SDK's ``accumulate_event``): blocks are tracked
  per ``index``; ``text_delta`` -> text, ``thinking_delta`` -> reasoning, ``signature_delta`` -> the
  block's signature, ``input_json_delta`` -> the block's input text. Only client ``tool_use`` blocks
  become tool calls; server tools and their results stay blocks. The ``input`` of
  ``content_block_start`` is used only when no ``input_json_delta`` arrived (``{}`` -> ``""``).
  Usage: the ``message_start`` usage, updated key by key with the non-null ``message_delta`` usage.
- ``openai-responses``: calls are keyed by ``output_index``; ``call_id`` is the tool-call id and the
  item id goes to ``item_id``; ``function_call_arguments.done`` / ``output_item.done`` arguments win
  over the concatenated deltas. Finish reason: the final response ``status``.
- ``gemini``: candidate 0 only. A ``functionCall`` with a name starts a call (``args`` whole, or
  ``partialArgs`` with ``jsonPath`` targets while ``willContinue``); a nameless one continues the
  open call. ``thought`` parts are reasoning. ``usageMetadata`` is cumulative: the last one wins.
- ``ollama`` (``/api/chat`` NDJSON): each ``message.tool_calls`` entry is a whole call whose
  ``arguments`` may be an object (serialised compactly); ``done: true`` ends the stream.

Values the core re-serialises (object arguments, Gemini args, usage objects, Anthropic blocks) hold
integers as signed 64-bit: larger ones become floats, and floats that overflow to infinity become
``None`` (JSON has no infinity; see :func:`norm`). An index is a JSON integer in ``0 .. 2**63-1``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

from toolweave.chat.finish import normalize_finish_reason

__all__ = ['FORMATS', 'Message', 'compact', 'norm', 'normalize_finish_reason']

_I64_MAX = 2**63 - 1
_PATH_PART = re.compile(r"\.([^.\[]+)|\[([0-9]+)\]|\['([^']*)'\]")


def norm(value: Any) -> Any:
    """A deep copy of a parsed value as the Rust core holds re-serialised values (``serde_json``).

    Integers outside the signed 64-bit range become floats (``None`` when even a float overflows);
    infinite floats become ``None``; everything else is copied unchanged.
    """
    if type(value) is int and not -(2**63) <= value <= 2**63 - 1:
        try:
            return float(value)
        except OverflowError:
            return None
    if type(value) is float and math.isinf(value):
        return None
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [norm(v) for v in value]
    return value


def compact(value: Any) -> str:
    """Compact JSON text of a parsed value (no spaces; non-ASCII kept), as the Rust core writes it."""
    return orjson.dumps(norm(value)).decode()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if type(value) is int and 0 <= value <= _I64_MAX else None


class Message:
    """The aggregation state shared by the formats of this module."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.text: list[str] = []
        self.reasoning: list[str] | None = None
        self.calls: list[dict[str, Any]] = []
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.done = False
        self.blocks: list[dict[str, Any]] = []

    def set_id_model(self, id: Any, model: Any) -> None:
        if self.id is None:
            self.id = _str(id) or None
        if self.model is None:
            self.model = _str(model) or None

    def add_reasoning(self, part: str) -> None:
        if self.reasoning is None:
            self.reasoning = []
        self.reasoning.append(part)

    def new_call(self, id: str, name: str) -> dict[str, Any]:
        call: dict[str, Any] = {
            'index': len(self.calls),
            'id': id,
            'name': name,
            'arguments': [],
            'final': None,
            'extra': {},
        }
        self.calls.append(call)
        return call

    def tool_calls(self) -> list[dict[str, Any]]:
        out = []
        for c in self.calls:
            arguments = c['final'] if c['final'] is not None else ''.join(c['arguments'])
            d = {'index': c['index'], 'id': c['id'], 'type': 'function', 'name': c['name'], 'arguments': arguments}
            d.update(c['extra'])
            out.append(d)
        return out


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


class Responses:
    """``openai-responses``: Responses API stream events."""

    def __init__(self, m: Message) -> None:
        self.m = m
        self.by_output: dict[int, dict[str, Any]] = {}

    def apply(self, chunk: dict[str, Any]) -> bool:
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


def _parse_path(path: str) -> list[str | int] | None:
    """``$.a.b[0]['c']`` -> ``['a', 'b', 0, 'c']``; None when the path does not parse."""
    if not path.startswith('$'):
        return None
    keys: list[str | int] = []
    pos = 1
    while pos < len(path):
        mt = _PATH_PART.match(path, pos)
        if mt is None:
            return None
        key, idx, quoted = mt.groups()
        keys.append(int(idx) if idx is not None else (key if key is not None else quoted))
        pos = mt.end()
    return keys


def _child(node: Any, key: str | int) -> tuple[Any, str | int] | None:
    """The container and key of ``node[key]`` (appending a slot at ``index == len``), or None."""
    if isinstance(key, int):
        if not isinstance(node, list) or key > len(node):
            return None
        if key == len(node):
            node.append(None)
        return node, key
    if not isinstance(node, dict):
        return None
    node.setdefault(key, None)
    return node, key


def _set_path(root: dict[str, Any], path: str, value: Any, append: bool) -> None:
    """Set ``value`` at a ``$.a.b[0]`` path in ``root``; strings are appended when ``append``.

    Missing or scalar intermediate nodes become containers; a list index may overwrite an element
    or append one (index == length); a larger index is ignored, so a hostile path cannot allocate
    a huge list (the Rust core's ``set_path`` does the same).
    """
    keys = _parse_path(path)
    if not keys or not isinstance(keys[0], str):
        return
    root.setdefault(keys[0], None)
    parent: Any = root
    at: str | int = keys[0]
    for key in keys[1:]:
        if not isinstance(parent[at], (dict, list)):
            parent[at] = [] if isinstance(key, int) else {}
        found = _child(parent[at], key)
        if found is None:
            return
        parent, at = found
    old = parent[at]
    parent[at] = old + value if append and isinstance(old, str) and isinstance(value, str) else value


class Gemini:
    """``gemini``: ``streamGenerateContent`` chunks."""

    def __init__(self, m: Message) -> None:
        self.m = m
        self.open: dict[str, Any] | None = None

    def apply(self, chunk: dict[str, Any]) -> bool:
        m = self.m
        m.set_id_model(chunk.get('responseId'), chunk.get('modelVersion'))
        if isinstance(chunk.get('usageMetadata'), dict):
            m.usage = norm(chunk['usageMetadata'])
        candidates = chunk.get('candidates')
        if not isinstance(candidates, list):
            return True
        for cand in candidates:
            if not isinstance(cand, dict) or cand.get('index', 0) != 0 or type(cand.get('index', 0)) is not int:
                continue
            content = cand.get('content')
            parts = content.get('parts') if isinstance(content, dict) else None
            if isinstance(parts, list):
                for part in parts:
                    if isinstance(part, dict):
                        self._part(part)
            if isinstance(cand.get('finishReason'), str):
                m.finish_reason = cand['finishReason']
        return True

    def _part(self, part: dict[str, Any]) -> None:
        m = self.m
        text = _str(part.get('text'))
        if text is not None:
            if part.get('thought') is True:
                m.add_reasoning(text)
            else:
                m.text.append(text)
        fc = part.get('functionCall')
        if not isinstance(fc, dict):
            return
        name = _str(fc.get('name'))
        if name:
            call = m.new_call(_str(fc.get('id')) or '', name)
            call['args'] = norm(fc['args']) if isinstance(fc.get('args'), dict) else {}
            call['path'] = None
            call['extra']['thought_signature'] = _str(part.get('thoughtSignature'))
            self.open = call
        elif self.open is None:
            return
        call = self.open
        partial = fc.get('partialArgs')
        if isinstance(partial, list):
            for pa in partial:
                if isinstance(pa, dict):
                    self._partial(call, pa)
        if fc.get('willContinue') is not True:
            self.open = None

    @staticmethod
    def _partial(call: dict[str, Any], pa: dict[str, Any]) -> None:
        path = _str(pa.get('jsonPath'))
        if path is None:
            return
        for key in ('stringValue', 'numberValue', 'boolValue', 'nullValue', 'structValue', 'listValue'):
            if key in pa:
                value = None if key == 'nullValue' else norm(pa[key])
                break
        else:
            return
        _set_path(call['args'], path, value, append=call['path'] == path)
        call['path'] = path if pa.get('willContinue') is True and isinstance(value, str) else None

    def finalize(self) -> None:
        for c in self.m.calls:
            c['final'] = compact(c['args'])
            if not c['id']:
                c['id'] = f'{self.m.id}-call-{c["index"]}' if self.m.id else f'call-{c["index"]}'


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
        for c in self.m.calls:
            if not c['id']:
                c['id'] = f'call-{c["index"]}'


FORMATS: dict[str, type[Anthropic | Responses | Gemini | Ollama]] = {
    'openai-responses': Responses,
    'anthropic': Anthropic,
    'gemini': Gemini,
    'ollama': Ollama,
}
