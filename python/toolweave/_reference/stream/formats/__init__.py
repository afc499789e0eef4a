"""Twin of ``rust/stream/formats/``: the per-format aggregators of ``toolweave._core`` (all but ``openai-chat``).

Each format folds parsed event payloads (JSON objects) into one :class:`Message`; the Rust core
(``rust/stream/formats/{anthropic,responses,gemini,ollama}.rs``, one file each, here too) follows the same rules:

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

from toolweave._reference.stream.formats.anthropic import Anthropic
from toolweave._reference.stream.formats.gemini import Gemini
from toolweave._reference.stream.formats.ollama import Ollama
from toolweave._reference.stream.formats.responses import Responses

__all__ = ['FORMATS', 'Anthropic', 'Gemini', 'Ollama', 'Responses']

FORMATS: dict[str, type[Anthropic | Responses | Gemini | Ollama]] = {
    'openai-responses': Responses,
    'anthropic': Anthropic,
    'gemini': Gemini,
    'ollama': Ollama,
}
