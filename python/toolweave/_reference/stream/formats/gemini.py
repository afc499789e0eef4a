"""Twin of ``rust/stream/formats/gemini.rs``: ``gemini`` ``streamGenerateContent`` chunks."""

from __future__ import annotations

import re
from typing import Any

from toolweave._reference.stream.message import Message, _str, compact, norm

__all__ = ['Gemini']

_PATH_PART = re.compile(r"\.([^.\[]+)|\[([0-9]+)\]|\['([^']*)'\]")


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
        """Fold one chunk in; always True (Gemini reports errors outside the stream)."""
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
        """Settle the whole arguments and the ids of the calls before a result is read."""
        for c in self.m.calls:
            c['final'] = compact(c['args'])
            if not c['id']:
                c['id'] = f'{self.m.id}-call-{c["index"]}' if self.m.id else f'call-{c["index"]}'
