"""toolweave tools served by ``toolweave mcp serve toolweave_tools:TOOLS`` in the tests."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel
from toolweave import ToolParam, tool
from toolweave.chat import Media


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(description='Greet someone by name')
def greet(name: Annotated[str, ToolParam(description='Who to greet')], excited: bool = False) -> str:
    return f'Hello, {name}{"!" if excited else "."}'


@tool
async def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


PNG = bytes.fromhex('89504e470d0a1a0a0000000d4948445200000001000000010806000000')


@tool
def chart(metric: str) -> list[object]:
    """A chart of a metric."""
    return [f'Chart of {metric}:', Media('image/png', PNG, 'chart.png')]


class Order(BaseModel):
    item: str
    quantity: int


class Shop:
    @tool
    def place_order(self, order: Order) -> str:
        """Place an order."""
        return f'{order.quantity} x {order.item} ordered'


TOOLS = [add, greet, divide, chart, Shop()]
