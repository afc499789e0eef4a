"""A lone surrogate in a schema or an instance: a ``ValueError`` naming its JSON pointer, from the core and the twin.

UTF-8 (so JSON text) cannot carry a lone surrogate (``'\\ud800'``, e.g. from a non-UTF-8 file name); the core's
conversion used to refuse one with a bare ``UnicodeEncodeError`` and no location. Now both ``toolweave._core`` and
the pure-Python twin (``toolweave._reference``) raise a plain ``ValueError`` (so ``except ValueError`` still
catches it) whose message names the code point, the schema or instance, and the JSON pointer (RFC 6901) of the
string, or of the object whose key holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import hypothesis.strategies as st
import pytest
import toolweave._core as rust
import toolweave._reference as twin
from hypothesis import given, settings

IMPLEMENTATIONS = [pytest.param(rust, id='rust'), pytest.param(twin, id='twin')]


def _message(code: str, where: str, pointer: str) -> str:
    return f'lone surrogate U+{code} in {where} at JSON pointer "{pointer}" (JSON text cannot carry it)'


def _raised(call: Callable[[], Any]) -> tuple[str, str] | None:
    """``(type name, message)`` of what ``call`` raised (``None``: it returned)."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - compared by type and message
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize('core', IMPLEMENTATIONS)
@pytest.mark.parametrize(
    ('schema', 'expected'),
    [
        ({'const': '\ud800'}, _message('D800', 'the schema string', '/const')),
        ({'enum': ['a', ('b', 'x\udfffy')]}, _message('DFFF', 'the schema string', '/enum/1/1')),
        ({'properties': {'\udc00': {}}}, _message('DC00', 'a key of the schema object', '/properties')),
        (
            {'properties': {'a/b~c': {'title': '\ud83d'}}},
            _message('D83D', 'the schema string', '/properties/a~1b~0c/title'),
        ),
        (
            {'$defs': MappingProxyType({'x': {'description': '\udbff'}})},
            _message('DBFF', 'the schema string', '/$defs/x/description'),
        ),
        ({'title': 'ok', 'description': '\ud800\udc00'}, _message('D800', 'the schema string', '/description')),
    ],
)
def test_a_schema_with_a_lone_surrogate_is_refused_with_its_pointer(core: Any, schema: Any, expected: str) -> None:
    with pytest.raises(ValueError) as caught:
        core.SchemaValidator(schema)
    assert str(caught.value) == expected
    assert type(caught.value) is ValueError  # not UnicodeEncodeError: a plain, located error
    assert caught.value.__cause__ is None and caught.value.__context__ is None


@pytest.mark.parametrize('core', IMPLEMENTATIONS)
@pytest.mark.parametrize('method', ['is_valid', 'errors', 'validate'])
@pytest.mark.parametrize(
    ('instance', 'expected'),
    [
        ({'a': '\udc00'}, _message('DC00', 'the instance string', '/a')),
        ({'a': ['ok', ('x', '\ud800')]}, _message('D800', 'the instance string', '/a/1/1')),
        ({'ok': 1, '\udc00': 2}, _message('DC00', 'a key of the instance object', '')),
        ('\udc00', _message('DC00', 'the instance string', '')),
        ([{'': '\ud800'}], _message('D800', 'the instance string', '/0/')),
    ],
)
def test_an_instance_with_a_lone_surrogate_is_refused_with_its_pointer(
    core: Any, method: str, instance: Any, expected: str
) -> None:
    validator = core.SchemaValidator({'type': 'object'})
    with pytest.raises(ValueError) as caught:
        getattr(validator, method)(instance)
    assert (type(caught.value), str(caught.value)) == (ValueError, expected)


@pytest.mark.parametrize('core', IMPLEMENTATIONS)
def test_the_schema_functions_name_the_pointer_too(core: Any) -> None:
    bad = {'type': 'object', 'properties': {'a': {'description': 'caf\udce9'}}}
    expected = _message('DCE9', 'the schema string', '/properties/a/description')
    calls: list[Callable[[], Any]] = [
        lambda: core.forbid_additional_properties(bad),
        lambda: core.upper_case_type_values(bad),
        lambda: core.to_dialect(bad, 'gemini'),
        lambda: core.hoist_defs_to_root(bad, {}),
    ]
    for call in calls:
        assert _raised(call) == ('ValueError', expected)
    root_defs = _message('D800', 'the root_defs string', '/X/title')
    assert _raised(lambda: core.hoist_defs_to_root({}, {'X': {'title': '\ud800'}})) == ('ValueError', root_defs)


@pytest.mark.parametrize('core', IMPLEMENTATIONS)
def test_the_first_problem_in_order_is_the_one_reported(core: Any) -> None:
    """Members in order, a key before its value: an earlier non-JSON value still raises its own error first."""
    assert _raised(lambda: core.SchemaValidator({}).errors({'a': {1, 2}, 'b': '\ud800'}))[0] == 'TypeError'
    assert _raised(lambda: core.SchemaValidator({}).errors({'a': '\ud800', 'b': {1}})) == (
        'ValueError',
        _message('D800', 'the instance string', '/a'),
    )
    assert _raised(lambda: core.SchemaValidator({}).errors({'a': ['x', '\udc01'], '\ud800': 1})) == (
        'ValueError',
        _message('DC01', 'the instance string', '/a/1'),
    )


def test_valid_text_and_surrogate_pairs_written_as_escapes_are_unaffected() -> None:
    """Only lone surrogates: astral characters (and their JSON escapes) validate as before."""
    for core in (rust, twin):
        validator = core.SchemaValidator({'properties': {'a': {'const': '😀'}}})
        assert validator.is_valid({'a': '😀'})
        assert validator.validate_json('{"a": "\\ud83d\\ude00"}') == {'a': '😀'}


# --- hypothesis: Rust vs twin over random placements -----------------------------------------------------------

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
SAFE_TEXT = st.text(st.characters(blacklist_categories=('Cs',)), max_size=4)
TAINTED_TEXT = st.tuples(SAFE_TEXT, SURROGATES, SAFE_TEXT).map(''.join)
TEXT = st.one_of(SAFE_TEXT, SAFE_TEXT, TAINTED_TEXT)
KEYS = st.one_of(st.sampled_from(['a', 'b/c', '~', '', 'é']), TEXT)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-2, 2), TEXT)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(KEYS, inner, max_size=3),
    ),
    max_leaves=12,
)


def _resolve(tree: Any, pointer: str) -> Any:
    """The value at ``pointer`` (RFC 6901) in ``tree``."""
    node = tree
    for raw in pointer.split('/')[1:]:
        part = raw.replace('~1', '/').replace('~0', '~')
        node = node[int(part)] if isinstance(node, (list, tuple)) else node[part]
    return node


@settings(max_examples=400, deadline=None)
@given(TREES)
def test_rust_and_twin_refuse_alike_and_the_pointer_leads_to_the_surrogate(tree: Any) -> None:
    as_instance = [_raised(lambda core=core: core.SchemaValidator(True).errors(tree)) for core in (rust, twin)]
    as_schema = [_raised(lambda core=core: core.SchemaValidator({'default': tree})) for core in (rust, twin)]
    assert as_instance[0] == as_instance[1]
    assert as_schema[0] == as_schema[1]
    raised = as_instance[0]
    if raised is None or 'lone surrogate' not in raised[1]:
        return
    assert raised[0] == 'ValueError'
    pointer = raised[1].split('JSON pointer "', 1)[1].rsplit('" (', 1)[0]
    target = _resolve(tree, pointer)
    code = chr(int(raised[1].split('U+', 1)[1][:4], 16))
    if 'a key of' in raised[1]:
        assert any(isinstance(k, str) and code in k for k in target)
    else:
        assert isinstance(target, str) and code in target
    assert as_schema[0] == ('ValueError', raised[1].replace('instance', 'schema').replace('"', '"/default', 1))
