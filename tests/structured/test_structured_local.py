"""entity() against the embedded llama.cpp model: real constrained decoding from the JSON schema.

The 270M model's wording is not asserted: the answer must validate, and the request must have carried
the schema as llama.cpp's ``response_format`` (native strategy).
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from support.local_model import needs_local
from toolweave import ChatClient
from toolweave.advisors import BaseAdvisor, ChatClientRequest
from toolweave.providers import LocalChatModel
from toolweave.structured import default_strategy


class Weather(BaseModel):
    city: str
    celsius: int


class Seen(BaseAdvisor):
    """Records the prompt of each model round."""

    def __init__(self) -> None:
        super().__init__(order=10**9)
        self.prompts: list = []

    def before(self, request: ChatClientRequest, chain: object) -> ChatClientRequest:
        self.prompts.append(request.prompt)
        return request


@pytest.mark.local_model
@needs_local
def test_entity_with_llama_cpp_json_schema_output() -> None:
    seen = Seen()
    with LocalChatModel(max_tokens=64) as model:
        assert default_strategy(model) == 'native'
        client = ChatClient.builder(model).default_advisors(seen).build()
        result = client.prompt('Paris is 18 degrees today. Give the city and the temperature.').response_entity(Weather)
        sent = model.prepare(seen.prompts[-1])
    assert isinstance(result.entity, Weather)
    assert sent.options.output_schema is not None and sent.options.output_schema.name == 'Weather'
    assert 'grammar' not in sent.options.extra_body  # llama.cpp builds the grammar from response_format
    assert result.chat_response.usage is not None and result.chat_response.usage.completion_tokens > 0
