"""Tool result conversion: the function's return value -> text for the model.

As Spring AI's ``DefaultToolCallResultConverter``, with one deliberate divergence: plain strings
are returned as they are (Spring JSON-quotes them), and ``None`` becomes ``Done`` unquoted.
"""

from __future__ import annotations

import base64
import io
from typing import Any, Protocol, runtime_checkable

import orjson
import pydantic

__all__ = ['DefaultToolCallResultConverter', 'ToolCallResultConverter']


@runtime_checkable
class ToolCallResultConverter(Protocol):
    """Turns a tool's return value into the text sent back to the model."""

    def convert(self, result: Any, return_type: Any | None = None) -> str:
        """Convert ``result`` (declared as ``return_type``, if known) to text."""
        ...


def _default(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode='json')
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode('ascii')
    raise TypeError(f'Object of type {type(value).__name__} is not JSON serializable')


def _image_json(png: bytes) -> str:
    return orjson.dumps({'mimeType': 'image/png', 'data': base64.b64encode(png).decode('ascii')}).decode()


def _is_pil_image(value: Any) -> bool:
    """A Pillow image, detected without importing Pillow (it is not a dependency)."""
    return any(
        cls.__module__.startswith('PIL.') and cls.__name__ == 'Image' for cls in type(value).__mro__
    ) and callable(getattr(value, 'save', None))


class DefaultToolCallResultConverter:
    """``None`` -> ``'Done'``; ``str`` -> as is; ``bytes`` -> PNG image JSON; else JSON (orjson).

    Bytes and Pillow images (saved as PNG; Pillow is detected, never imported) become
    ``{"mimeType": "image/png", "data": "<base64>"}`` as Spring does for images.
    Pydantic models, dataclasses, sets, dates, UUIDs and enums are serialised; anything else
    raises ``TypeError`` naming the type (the manager turns it into text for the model).
    """

    def convert(self, result: Any, return_type: Any | None = None) -> str:
        """Convert ``result`` to text; see the class docstring for the rules."""
        if result is None:
            return 'Done'
        if isinstance(result, str):
            return result
        if isinstance(result, (bytes, bytearray)):
            return _image_json(bytes(result))
        if _is_pil_image(result):
            buffer = io.BytesIO()
            result.save(buffer, format='PNG')
            return _image_json(buffer.getvalue())
        return orjson.dumps(result, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()
