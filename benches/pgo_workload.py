"""The profile-guided optimisation workload of the Rust core (``make wheel`` / ``make bench`` with PGO).

Runs the core's hot paths a few seconds on the repository's own inputs, in the proportions a tool-calling service
sees them: ``parse_arguments`` in every mode (argument objects of 0.6 KB to 178 KB, whole and truncated),
``PartialArguments`` fed a streamed call fragment by fragment, ``StreamAggregator`` on the recorded provider streams
of ``tests/data/streams``, and ``SchemaValidator.validate_json`` on the argument schemas of ``tests/data/schemas`` and on a nested order (valid
arguments take the accept plan, invalid ones the crate's error list).
The core it loads is the instrumented build's (``toolweave._core`` as installed, or the shared library given as the
first argument); the LLVM profile runtime writes the counts when the process exits.

Usage: ``python benches/pgo_workload.py [path/to/_core.so] [--seconds S]`` (default 3 s).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.machinery
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# the workload's inputs, and the package's Python modules the core imports (toolweave.exceptions): from the source
# tree, so a fresh clone's `make wheel` needs no installed toolweave
sys.path[:0] = [str(ROOT / 'benches'), str(ROOT / 'python')]

from _streams import CJK_ARGS, partial_fragments


def load_core(path: str | None) -> ModuleType:
    """``toolweave._core`` from the shared library at ``path``, or the installed one."""
    if path is None:
        import toolweave._core as core

        return core
    loader = importlib.machinery.ExtensionFileLoader('toolweave._core', path)
    spec = importlib.util.spec_from_file_location('toolweave._core', path, loader=loader)
    assert spec is not None
    core = importlib.util.module_from_spec(spec)
    sys.modules['toolweave._core'] = core  # what `import toolweave._core` finds from here on
    loader.exec_module(core)
    return core


def documents() -> list[str]:
    """Argument texts: a small CJK object, a 2 KB streamed call, a 178 KB table, and the recorded test cases."""
    large = {
        'rows': [
            {'id': i, 'name': f'row {i}', 'score': i / 3, 'tags': ['a', 'b'], 'ok': i % 2 == 0} for i in range(2000)
        ]
    }
    texts = [json.dumps(args, ensure_ascii=False) for _, args in CJK_ARGS]
    texts += [''.join(partial_fragments()), json.dumps(large)]
    for case in sorted((ROOT / 'tests' / 'data' / 'schemas').glob('*.json')):
        texts.append(json.dumps({'schema': json.loads(case.read_text())}))
    return texts


def stream_format(name: str) -> str:
    """The wire format of a recorded stream, from its file name."""
    for key, fmt in (('anthropic', 'anthropic'), ('gemini', 'gemini'), ('responses', 'openai-responses')):
        if key in name:
            return fmt
    return 'openai-chat'


def order_case() -> tuple[dict[str, Any], list[str]]:
    """A pydantic-style nested schema (``$ref``, ``anyOf``, ``enum``, int64 bounds) and a valid and an invalid text."""
    item = {
        'properties': {
            'sku': {'type': 'string'},
            'quantity': {'type': 'integer', 'minimum': -(2**63), 'maximum': 2**63 - 1},
            'price': {'type': 'number'},
            'tags': {'items': {'$ref': '#/$defs/Tag'}, 'type': 'array'},
            'note': {'anyOf': [{'type': 'string'}, {'type': 'null'}], 'default': None},
        },
        'required': ['sku', 'quantity', 'price'],
        'type': 'object',
        'additionalProperties': False,
    }
    schema = {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        '$defs': {'Item': item, 'Tag': {'enum': ['alpha', 'beta', 'gamma'], 'type': 'string'}},
        'type': 'object',
        'properties': {'customer': {'type': 'string'}, 'items': {'items': {'$ref': '#/$defs/Item'}, 'type': 'array'}},
        'required': ['customer', 'items'],
        'additionalProperties': False,
    }
    items = [
        {'sku': f'SKU-{i}', 'quantity': i + 1, 'price': 9.99 + i, 'tags': ['alpha'], 'note': None} for i in range(20)
    ]
    valid = json.dumps({'customer': 'Ada', 'items': items})
    return schema, [valid, valid.replace('"quantity": 3', '"quantity": "three"', 1)]


def run(core: ModuleType, seconds: float) -> int:
    """Every path in turn until ``seconds`` have passed; the number of rounds."""
    texts = documents()
    streams = [
        (stream_format(p.name), p.read_bytes()) for p in sorted((ROOT / 'tests' / 'data' / 'streams').glob('*.sse'))
    ]
    fragments = partial_fragments()
    schemas = [json.loads(p.read_text()) for p in sorted((ROOT / 'tests' / 'data' / 'schemas').glob('*.json'))]
    validators = [core.SchemaValidator(s) for s in schemas]
    instance = json.dumps({'city': 'Paris', 'unit': 'celsius', 'days': 3})
    order_schema, order_texts = order_case()
    order = core.SchemaValidator(order_schema)
    rounds = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for text in texts:
            core.parse_arguments(text)
            core.parse_arguments(text, 'partial')
            core.parse_arguments(text[: len(text) * 2 // 3], 'partial')
            core.parse_arguments(text, 'lenient')
        for fmt, data in streams:
            aggregator = core.StreamAggregator(fmt)
            # some recordings end in the provider's error event (StreamFormatError / ProviderStreamError)
            with contextlib.suppress(ValueError, RuntimeError):
                for start in range(0, len(data), 512):
                    aggregator.feed(data[start : start + 512])
                aggregator.finish()
        partial = core.PartialArguments()
        for fragment in fragments:
            partial.feed(fragment)
        for validator in validators:
            with contextlib.suppress(ValueError):
                validator.validate_json(instance)
        for text in order_texts:
            with contextlib.suppress(ValueError):
                order.validate_json(text, int64=True)
        rounds += 1
    return rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('core', nargs='?', help='the instrumented shared library (default: the installed core)')
    parser.add_argument('--seconds', type=float, default=3.0)
    args = parser.parse_args()
    rounds = run(load_core(args.core), args.seconds)
    print(f'pgo workload: {rounds} rounds in {args.seconds:g} s')


if __name__ == '__main__':
    main()
