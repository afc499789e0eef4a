"""``ToolParam``: per-parameter description and required flag (Spring AI ``@ToolParam``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ['ToolParam']


@dataclass(frozen=True)
class ToolParam:
    """Metadata for one tool parameter, used inside ``Annotated``.

    >>> from typing import Annotated
    >>> def get_weather(city: Annotated[str, ToolParam(description='City name')]) -> str: ...

    Attributes:
        description: Shown to the model; wins over ``Field(description=)`` and the docstring.
        required: Overrides the required rule (``None``: decide from ``None``-ability and default).
    """

    description: str | None = None
    required: bool | None = None
