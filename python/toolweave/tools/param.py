"""``ToolParam``: per-parameter description and required flag (Spring AI ``@ToolParam``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ['REQUIRED_MARK', 'ToolParam']

REQUIRED_MARK = 'x-toolweave-required'
"""Schema key that carries ``ToolParam.required`` of a nested field until the schema generator applies it."""


@dataclass(frozen=True)
class ToolParam:
    """Metadata for one tool parameter, used inside ``Annotated``.

    >>> from typing import Annotated
    >>> def get_weather(city: Annotated[str, ToolParam(description='City name')]) -> str: ...

    It works on tool parameters and on fields of nested pydantic models and dataclasses alike. On a
    nested field, ``required=False`` only changes the schema: give such a field a default (or make it
    ``Optional``) so that the validator accepts it when the model leaves it out.

    Attributes:
        description: Shown to the model; wins over ``Field(description=)`` and the docstring.
        required: Overrides the required rule (``None``: decide from ``None``-ability and default).
    """

    description: str | None = None
    required: bool | None = None

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        """Pydantic hook: the description goes on the field's schema, ``required`` as :data:`REQUIRED_MARK`."""
        schema = dict(handler(core_schema))
        if self.description:
            schema['description'] = self.description
        if self.required is not None:
            schema[REQUIRED_MARK] = self.required
        return schema
