"""What importing and building an HTTP provider model loads (issue #14): neither asyncio nor httpcore.

``from toolweave.providers import OpenAIChatModel`` (as the README imports it) loaded asyncio through
the shared HTTP layer and httpcore through the deadline backend. Both now load when first needed:
asyncio with the first async request (or retry wait), httpcore with the first HTTP client a model
creates (it wraps httpcore's network backend). Checked by module in fresh interpreters, and every
path still works when it is what loads them.
"""

from __future__ import annotations

from test_import_cost import loaded_after, run_fresh

DEFERRED = {'asyncio', 'httpcore', 'toolweave.providers._deadline_backend', 'toolweave.providers._pool'}

MODELS = [
    'from toolweave.providers import OpenAIChatModel as M',
    'from toolweave.providers import AnthropicChatModel as M',
    'from toolweave.providers import OpenAIResponsesModel as M',
]


def test_importing_a_provider_loads_neither_asyncio_nor_httpcore() -> None:
    for statement in MODELS:
        loaded = loaded_after(statement)
        assert 'toolweave.providers._http' in loaded  # the import did happen
        assert sorted(DEFERRED & loaded) == [], statement


def test_building_a_model_loads_neither() -> None:
    loaded = loaded_after(f"{MODELS[0]}\nM(base_url='http://127.0.0.1:9/v1', api_key='k', model='m')")
    assert sorted(DEFERRED & loaded) == []


SERVER = """
import http.server, threading
BODY = (b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\\n\\n'
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
        b'"finish_reason":"stop"}]}\\n\\ndata: [DONE]\\n\\n')
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers['content-length']))
        self.send_response(200); self.send_header('content-type', 'text/event-stream')
        self.send_header('content-length', str(len(BODY))); self.end_headers(); self.wfile.write(BODY)
    def log_message(self, *a): pass
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
threading.Thread(target=server.serve_forever, daemon=True).start()
from toolweave.chat import Prompt
from toolweave.providers import OpenAIChatModel
model = OpenAIChatModel(base_url=f'http://127.0.0.1:{server.server_address[1]}/v1', api_key='k', model='m')
"""


def test_a_blocking_stream_loads_httpcore_and_the_deadline_then_works() -> None:
    code = SERVER + (
        "print(''.join(c.text for c in model.stream_sync(Prompt.of('q'))))\n"
        'import sys\n'
        "print(sorted(m for m in ('httpcore', 'toolweave.providers._deadline_backend', 'toolweave.providers._pool')"
        ' if m in sys.modules))\n'
    )
    text, modules = run_fresh(code).splitlines()
    assert text == 'hi'
    assert modules == "['httpcore', 'toolweave.providers._deadline_backend', 'toolweave.providers._pool']"


def test_an_async_stream_works_when_it_is_what_loads_asyncio_s_users() -> None:
    code = SERVER + (
        'import asyncio\n'
        'async def main():\n'
        "    text = ''.join([c.text async for c in model.stream(Prompt.of('q'))])\n"
        '    await model.aclose()\n'
        '    return text\n'
        'print(asyncio.run(main()))\n'
    )
    assert run_fresh(code).split() == ['hi']
