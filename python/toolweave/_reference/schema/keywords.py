"""The ``jsonschema`` package's keywords made to answer as the Rust ``jsonschema`` crate 0.61 does.

What changes (each mirrors a file of the crate, ``src/keywords/``):

- order: a node's keywords run by the crate's ``keyword_priority`` (``type`` first, ``$ref`` last), not in
  schema order;
- ``additionalProperties`` (``false`` or a schema) takes over ``properties`` and ``patternProperties``, member by
  member in instance order, one ``additionalProperties`` error after them (``additional_properties.rs``), and, with
  ``properties`` and a one-name ``required``, that ``required`` error after it (the crate's fused validator);
- keyword names: a failing property name is ``propertyNames`` (``false``: one ``falseSchema`` error), ``min/maxContains``
  are ``contains``, ``dependentRequired`` and array ``dependencies`` are ``required``;
- ``multipleOf`` in the crate's arithmetic (``jsonschema-value``'s ``numeric.rs``), ``pattern`` in its regex dialect
  (:mod:`.ecma_regex`);
- a ``false`` subschema's error points at its member (``/a``), as the crate's, not at the parent;
- ``unevaluatedProperties`` counts the names the crate's walk marks (``unevaluated_properties.rs``), not the
  package's ``find_evaluated_property_keys_by_schema``: every name ``additionalProperties`` applied to, failing
  or not, patterns in the crate's dialect, a ``oneOf`` branch only when it alone holds;
- a ``$ref`` back to a target already followed, for an instance it already applies to that way, is ``true`` (the
  crate's cycle guard), where the package recursed without end.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import itertools
import math
import sys
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from toolweave._reference.schema import messages
from toolweave._reference.schema.ecma_regex import is_valid_pattern, search

__all__ = ['ACTIVE_REFS', 'RefState', 'check_refs', 'validator_class']

# The crate's `keyword_priority` (src/keywords/mod.rs); other keywords rank 80.
PRIORITY = {
    'type': 1,
    'const': 5,
    'enum': 6,
    'minimum': 10,
    'maximum': 11,
    'exclusiveMinimum': 12,
    'exclusiveMaximum': 13,
    'multipleOf': 14,
    'minLength': 20,
    'maxLength': 21,
    'minItems': 22,
    'maxItems': 23,
    'minProperties': 24,
    'maxProperties': 25,
    'required': 26,
    'dependentRequired': 27,
    'pattern': 30,
    'format': 31,
    'contentEncoding': 32,
    'contentMediaType': 33,
    'contentSchema': 34,
    'uniqueItems': 35,
    'properties': 40,
    'patternProperties': 41,
    'additionalProperties': 42,
    'propertyNames': 43,
    'items': 44,
    'prefixItems': 45,
    'additionalItems': 46,
    'contains': 47,
    'dependencies': 48,
    'dependentSchemas': 49,
    'allOf': 50,
    'anyOf': 51,
    'oneOf': 52,
    'not': 53,
    'if': 54,
    'unevaluatedProperties': 60,
    'unevaluatedItems': 61,
    '$ref': 70,
    '$recursiveRef': 71,
    '$dynamicRef': 72,
}


@dataclasses.dataclass
class RefState:
    """The state of one validation call's cycle guards.

    The ``$ref`` targets followed to the current node, the guarded (target, instance) pairs, and the (node,
    instance) pairs whose evaluated names are being found (``marking``: the crate's ``enter_marking`` guard,
    call-wide as its). All by identity: the instance is a private deep copy, so no container appears twice in it.
    """

    chain: list[int] = dataclasses.field(default_factory=list)
    guarded: set[tuple[int, int]] = dataclasses.field(default_factory=set)
    marking: set[tuple[int, int]] = dataclasses.field(default_factory=set)


# The state of the SchemaValidator call running now.
ACTIVE_REFS: contextvars.ContextVar[RefState | None] = contextvars.ContextVar('toolweave_active_refs')
_I128_MAX = 2**127 - 1
_ARRAY_SHAPE = ('type', 'minItems', 'maxItems', 'items')
_HASHMAP_THRESHOLD = 15  # the crate's: from this many properties, a hash map


@functools.cache
def validator_class(base: Any) -> Any:
    """``base`` (a ``jsonschema`` validator class) with the crate's keyword behaviour, order and regex format."""
    import jsonschema  # type: ignore[import-untyped]  # test dependency, only for the pure-Python twin
    import jsonschema.validators  # type: ignore[import-untyped]

    applicable = base._APPLICABLE_VALIDATORS
    checker = jsonschema.FormatChecker()
    checker.checkers = dict(base.FORMAT_CHECKER.checkers)
    checker.checks('regex')(is_valid_pattern)
    keywords = {k: f for k, f in _KEYWORDS.items() if k in base.VALIDATORS}
    if 'contains' in base.VALIDATORS:
        keywords['contains'] = functools.partial(_contains, base.VALIDATORS['contains'])
    if 'unevaluatedItems' in base.VALIDATORS:  # the finder of the package's module for this draft (2019-09's differs)
        module = sys.modules[base.VALIDATORS['unevaluatedItems'].__module__]
        keywords['unevaluatedItems'] = functools.partial(
            _unevaluated_items, module.find_evaluated_item_indexes_by_schema
        )
    cls = jsonschema.validators.create(
        meta_schema=base.META_SCHEMA,
        validators={**base.VALIDATORS, **keywords},
        type_checker=base.TYPE_CHECKER,
        format_checker=base.FORMAT_CHECKER,
        id_of=base.ID_OF,
        applicable_validators=lambda schema: sorted(applicable(schema), key=_ranking(schema)),
    )
    cls.SCHEMA_FORMAT_CHECKER = checker
    cls.descend = functools.partialmethod(_descend, cls.descend)
    cls.evolve = functools.partialmethod(_evolve, cls.evolve)
    cls.TOOLWEAVE_TWIN = True
    return cls


def _evolve(validator: Any, original: Any, **changes: Any) -> Any:
    """The package's ``evolve``, staying on the twin's classes when the new schema names its ``$schema``.

    The package picks the class of a subschema that declares ``$schema`` (the root reached again by ``$ref: "#"``,
    say) from its own registry, which holds its stock classes; those lack the crate's keyword behaviour, so the
    evolved validator is rebuilt as the twin's class of that draft (:func:`validator_class`).
    """
    import attrs

    evolved = original(validator, **changes)
    stock: Any = type(evolved)
    if getattr(stock, 'TOOLWEAVE_TWIN', False):
        return evolved
    fields = attrs.fields(stock)
    return validator_class(stock)(**{field.alias: getattr(evolved, field.name) for field in fields if field.init})


def _descend(validator: Any, original: Any, instance: Any, schema: Any, path: Any = None, **kwargs: Any) -> Any:
    """The package's ``descend``, with the path of a ``false`` subschema's error kept (the package leaves it off)."""
    for error in original(validator, instance, schema, path=path, **kwargs):
        if schema is False and path is not None:
            error.path.appendleft(path)
        yield error


# Keywords whose value is a subschema, a list of them, or a map of them, that the crate compiles.
_ONE_SCHEMA = frozenset(
    [
        'additionalProperties',
        'additionalItems',
        'items',
        'contains',
        'propertyNames',
        'not',
        'if',
        'then',
        'else',
        'unevaluatedItems',
        'unevaluatedProperties',
        'contentSchema',
    ]
)
_SCHEMA_LISTS = frozenset(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'])
_SCHEMA_MAPS = frozenset(['properties', 'patternProperties', 'dependentSchemas', 'dependencies'])


def check_refs(validator: Any) -> None:
    """Resolve every ``$ref`` the crate compiles, as it does when building.

    Those reachable from the root through keywords and other references, not those only in unused ``$defs``.

    Raises:
        ValueError: a reference that resolves to nothing (``invalid JSON Schema: ...``), as the crate.
    """
    import referencing.exceptions

    specification = _specification(validator)
    seen: set[int] = set()
    stack = [(validator.schema, validator._resolver)]
    while stack:
        node, resolver = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        resolver = resolver.in_subresource(specification.create_resource(node))
        if isinstance(node.get('$ref'), str):
            try:
                resolved = resolver.lookup(node['$ref'])
            except referencing.exceptions.Unresolvable as exc:
                raise ValueError(f'invalid JSON Schema: {exc}') from None
            stack.append((resolved.contents, resolved.resolver))
        for key, value in node.items():
            if key in _ONE_SCHEMA:
                stack.append((value, resolver))
            if key in _SCHEMA_LISTS and isinstance(value, list):
                stack.extend((item, resolver) for item in value)
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                stack.extend((item, resolver) for item in value.values())


def _specification(validator: Any) -> Any:
    """The ``referencing`` specification of ``validator``'s draft, as the package's ``descend`` enters subschemas."""
    import referencing.jsonschema

    return referencing.jsonschema.specification_with(
        validator.ID_OF(validator.META_SCHEMA) or 'urn:unknown-dialect', default=referencing.Specification.OPAQUE
    )


def _ranking(schema: Any) -> Any:
    """The sort key of a node's keywords: the crate's priority.

    With the crate's array-shape fusion (``array_shape_fusion`` in ``items.rs``), ``type``, ``minItems`` and
    ``maxItems`` report where ``items`` does.
    """
    fused = isinstance(schema, dict) and _array_shape_fusion(schema)

    def rank(item: tuple[str, Any]) -> tuple[int, int]:
        if fused and item[0] in _ARRAY_SHAPE:
            return PRIORITY['items'], _ARRAY_SHAPE.index(item[0])
        return PRIORITY.get(item[0], 80), 0

    return rank


def _array_shape_fusion(schema: Mapping[str, Any]) -> bool:
    return (
        (isinstance(schema.get('items'), dict) or schema.get('items') is False)
        and schema.get('type') == 'array'
        and not any(
            k in schema for k in ('prefixItems', 'additionalItems', 'contains', 'unevaluatedItems', 'uniqueItems')
        )
    )


def _error(text: str, **kwargs: Any) -> Any:
    """A package ``ValidationError`` worded as the crate (``text``, from :mod:`.messages`)."""
    from jsonschema import ValidationError

    return messages.crate_error(ValidationError(text, **kwargs), text)


def _is_object(validator: Any, instance: Any) -> bool:
    return bool(validator.is_type(instance, 'object'))


def _closes(schema: Mapping[str, Any]) -> bool:
    """Whether ``additionalProperties`` takes over ``properties``/``patternProperties`` (``false`` or a schema)."""
    return schema.get('additionalProperties') is False or isinstance(schema.get('additionalProperties'), dict)


def _fuses_required(schema: Mapping[str, Any]) -> bool:
    """The crate's ``AdditionalPropertiesNotEmptyFalseWithRequired1Validator``: its ``required`` error comes last.

    It finds the required name only among the members ``properties`` declares: one present but undeclared is also
    reported missing.
    """
    required = schema.get('required')
    return (
        schema.get('additionalProperties') is False
        and isinstance(schema.get('properties'), dict)
        and 'patternProperties' not in schema
        and isinstance(required, list)
        and len(required) == 1
        and isinstance(required[0], str)
    )


def _fuses_required2(schema: Mapping[str, Any]) -> bool:
    """The crate's ``SmallPropertiesWithRequired2Validator``: a two-name ``required`` checked with ``properties``."""
    required = schema.get('required')
    return (
        isinstance(schema.get('properties'), dict)
        and len(schema['properties']) < _HASHMAP_THRESHOLD
        and 'patternProperties' not in schema
        and not _closes(schema)
        and isinstance(required, list)
        and len(required) == 2
        and all(isinstance(name, str) for name in required)
    )


def _properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``properties`` in the crate's order.

    The instance's when it has at most 4 members a property (or there are 15+ properties), else the schema's.
    """
    if not _is_object(validator, instance) or _closes(schema):
        return
    if _fuses_required2(schema):
        yield from _required_names(validator, schema['required'], instance)
    if len(properties) >= _HASHMAP_THRESHOLD or len(instance) <= 4 * len(properties):
        names = [name for name in instance if name in properties]
    else:
        names = [name for name in properties if name in instance]
    for name in names:
        yield from validator.descend(instance[name], properties[name], path=name, schema_path=name)


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if _is_object(validator, instance) and not _closes(schema):
        for pattern, sub in patterns.items():
            for name, value in instance.items():
                if search(pattern, name):
                    yield from validator.descend(value, sub, path=name, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not _is_object(validator, instance) or extra is True:
        return
    if extra is False and 'properties' not in schema and 'patternProperties' not in schema:
        if instance:  # the crate's AdditionalPropertiesFalseValidator: one error, for the first member, at the object
            yield _error(messages.false_schema(next(iter(instance.values()))), validator=None)
        return
    properties = schema.get('properties', {}) if _closes(schema) else {}
    patterns = schema.get('patternProperties', {})
    unexpected = []
    for name, value in instance.items():
        matched = name in properties
        if matched:
            yield from validator.descend(value, properties[name], path=name, schema_path=name)
        for pattern, sub in patterns.items():
            if search(pattern, name):
                matched = True
                yield from validator.descend(value, sub, path=name, schema_path=pattern)
        if matched:
            continue
        if extra is False:
            unexpected.append(name)
        else:
            yield from validator.descend(value, extra, path=name)
    if unexpected:
        yield _error(messages.additional_properties(unexpected))
    if _fuses_required(schema):  # the fused validator looks for the name among the declared members only
        yield from _required_names(
            validator, schema['required'], {n: v for n, v in instance.items() if n in properties}
        )


def _required(validator: Any, required: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not _fuses_required(schema) and not _fuses_required2(schema):
        yield from _required_names(validator, required, instance)


def _required_names(validator: Any, required: Any, instance: Any) -> Iterator[Any]:
    if _is_object(validator, instance):
        for name in required:
            if name not in instance:
                yield _error(messages.required(name), validator='required', validator_value=required)


def _dependent_required(validator: Any, dependent: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if _is_object(validator, instance):
        for name, needed in dependent.items():
            if name in instance:
                yield from _required_names(validator, needed, instance)


def _dependencies(validator: Any, dependencies: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not _is_object(validator, instance):
        return
    for name, dependency in dependencies.items():
        if name not in instance:
            continue
        if isinstance(dependency, list):
            yield from _required_names(validator, dependency, instance)
        else:
            yield from validator.descend(instance, dependency, schema_path=name)


def _property_names(validator: Any, names: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not _is_object(validator, instance) or not instance:
        return
    if names is False:
        yield _error(messages.false_schema(instance), validator=None)
        return
    for name in instance:
        for error in validator.descend(name, names):
            yield _error(messages.message(error), validator='propertyNames', validator_value=names)


def _contains(original: Any, validator: Any, contains: Any, instance: Any, schema: Any) -> Iterator[Any]:
    for _ in original(validator, contains, instance, schema):
        yield _error(messages.contains(instance), validator='contains', validator_value=contains)


def _unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``unevaluatedProperties``: one error listing, in instance order, the names no keyword evaluated.

    The names :func:`_evaluated_names` does not find: with this node's own ``unevaluatedProperties`` among the
    keywords, those whose value fails it.
    """
    if not _is_object(validator, instance):
        return
    evaluated = _evaluated_names(validator, instance, schema, (ACTIVE_REFS.get(None) or RefState()).marking)
    names = [name for name in instance if name not in evaluated]
    if names:
        yield _error(messages.unevaluated('properties', names))


def _evaluated_names(validator: Any, instance: Any, schema: Any, active: set[tuple[int, int]]) -> set[str]:
    """The names of ``instance`` (an object) that ``schema`` (``validator``'s node) evaluates, as the crate marks them.

    The crate's ``mark_evaluated_properties`` (``unevaluated_properties.rs``): the node's own keywords
    (:func:`_own_evaluated_names`) and, through each object subschema it applies in place
    (:func:`_in_place_subschemas`), that subschema's names. A node already being walked for this instance
    (``active``: a reference cycle, also through the validity checks of branches) adds nothing, as the crate's
    ``enter_marking`` guard.
    """
    key = (id(schema), id(instance))
    if not isinstance(schema, dict) or key in active:
        return set()
    active.add(key)
    names = _own_evaluated_names(validator, instance, schema)
    for sub, resolver in _in_place_subschemas(validator, instance, schema):
        if isinstance(sub, dict):
            resolver = resolver or validator._resolver.in_subresource(_specification(validator).create_resource(sub))
            names |= _evaluated_names(validator.evolve(schema=sub, _resolver=resolver), instance, sub, active)
    active.discard(key)
    return names


def _own_evaluated_names(validator: Any, instance: Any, schema: Mapping[str, Any]) -> set[str]:
    """The names a node's own keywords evaluate, valid or not.

    Those in ``properties``, matching a ``patternProperties`` pattern (the twin's regex dialect), all of them with an
    ``additionalProperties`` (any value: the crate counts the names it applied to even when they fail it), and those
    valid against an ``unevaluatedProperties``.
    """
    names = {name for name in instance if name in schema.get('properties', ())}
    if isinstance(schema.get('patternProperties'), dict):
        names.update(name for name in instance if any(search(p, name) for p in schema['patternProperties']))
    if 'additionalProperties' in schema:
        names.update(instance)
    if 'unevaluatedProperties' in schema:
        sub = schema['unevaluatedProperties']
        names.update(n for n in instance if n not in names and next(validator.descend(instance[n], sub), None) is None)
    return names


def _in_place_subschemas(validator: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """The subschemas whose evaluated names count for ``schema``'s, each with its resolver (None: enter it).

    As the crate's walk: ``$ref``, ``$dynamicRef`` (looked up statically) and ``$recursiveRef`` always; the
    ``dependentSchemas`` of present names, valid or not; ``if`` and ``then`` when ``if`` holds, else ``else``; the
    valid ``allOf`` and ``anyOf`` branches; the ``oneOf`` branch when it is the only valid object branch (a boolean
    branch is not counted).
    """

    def holds(sub: Any) -> bool:
        return next(validator.descend(instance, sub), None) is None

    for ref in (schema.get('$ref'), schema.get('$dynamicRef')):
        if isinstance(ref, str):
            target = validator._resolver.lookup(ref)
            yield target.contents, target.resolver
    if '$recursiveRef' in schema and '$recursiveRef' in validator.VALIDATORS:
        from referencing.jsonschema import lookup_recursive_ref

        target = lookup_recursive_ref(validator._resolver)
        yield target.contents, target.resolver
    yield from ((sub, None) for name, sub in schema.get('dependentSchemas', {}).items() if name in instance)
    if isinstance(schema.get('if'), (dict, bool)):
        branches = (schema['if'], schema.get('then')) if holds(schema['if']) else (schema.get('else'),)
        yield from ((sub, None) for sub in branches)
    yield from (
        (b, None) for b in [*schema.get('allOf', ()), *schema.get('anyOf', ())] if isinstance(b, dict) and holds(b)
    )
    valid = list(itertools.islice((b for b in schema.get('oneOf', ()) if isinstance(b, dict) and holds(b)), 2))
    if len(valid) == 1:
        yield valid[0], None


def _unevaluated_items(
    find_evaluated: Any, validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    """The package's ``unevaluatedItems`` (same verdict: it counts the keyword's own schema as evaluating).

    ``find_evaluated`` is the package's ``find_evaluated_item_indexes_by_schema`` of the draft.
    """
    if not validator.is_type(instance, 'array'):
        return
    evaluated = find_evaluated(validator, instance, schema)
    items = [messages.json_text(item) for index, item in enumerate(instance) if index not in evaluated]
    if items:
        yield _error(messages.unevaluated('items', items))


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, 'string') and not search(pattern, instance):
        yield _error(messages.pattern(instance, pattern))


def _multiple_of(validator: Any, multiple: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, 'number') and not is_multiple_of(instance, multiple):
        yield _error(messages.multiple_of(instance, multiple))


def _ref(validator: Any, ref: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``$ref`` with the crate's cycle guard (:func:`_guarded_descend`)."""
    resolved = validator._resolver.lookup(ref)
    if resolved.contents is schema:
        return  # the crate compiles no validator for a reference to its own schema
    yield from _guarded_descend(validator, instance, resolved)


def _recursive_ref(validator: Any, ref: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """2019-09's ``$recursiveRef`` (the package's resolution) with the crate's cycle guard (:func:`_guarded_descend`).

    Without the guard a ``$recursiveRef`` back to a ``$recursiveAnchor`` whose schema reaches it again on the same
    instance (through ``anyOf``, say) recursed without end, where the crate's weak back-reference holds.
    """
    from referencing.jsonschema import lookup_recursive_ref

    yield from _guarded_descend(validator, instance, lookup_recursive_ref(validator._resolver))


def _guarded_descend(validator: Any, instance: Any, resolved: Any) -> Iterator[Any]:
    """The errors of ``instance`` under a reference's ``resolved`` target, with the crate's cycle guard.

    As ``PendingSchemaNode`` in the crate's ``node.rs``: a reference to a target it is still compiling is a weak
    back-reference, and only those are guarded: entering one for a (target, instance) pair already entered that
    way is ``true``. Here a reference is a back-reference when its target is already on the chain of targets
    followed to get here.
    """
    refs = ACTIVE_REFS.get(None) or RefState()  # always set by SchemaValidator
    target = id(resolved.contents)
    key = (target, id(instance))
    weak = target in refs.chain
    if weak:
        if key in refs.guarded:
            return
        refs.guarded.add(key)
    refs.chain.append(target)
    try:
        yield from validator.descend(instance, resolved.contents, resolver=resolved.resolver)
    finally:
        refs.chain.pop()
        if weak:
            refs.guarded.discard(key)


_KEYWORDS = {
    'properties': _properties,
    'patternProperties': _pattern_properties,
    'additionalProperties': _additional_properties,
    'required': _required,
    'dependentRequired': _dependent_required,
    'dependencies': _dependencies,
    'propertyNames': _property_names,
    'unevaluatedProperties': _unevaluated_properties,
    'pattern': _pattern,
    'multipleOf': _multiple_of,
    '$ref': _ref,
    '$recursiveRef': _recursive_ref,
}


def is_multiple_of(value: float, multiple: float) -> bool:
    """``multipleOf`` as the crate computes it (``is_multiple_of_integer`` / ``is_multiple_of_float``).

    A whole ``multiple`` up to 2**53 divides integers exactly; otherwise floats: the shortest decimals of both when
    their quotient fits the crate's ``i128`` arithmetic, else the ``fraction`` crate's reading of the two floats.
    """
    m = float(multiple)
    if m.is_integer():
        if isinstance(value, int) and 0 < m <= 2**53:
            return value % int(m) == 0
        v = float(value)
        return v == 0.0 or (v.is_integer() and math.fmod(v, m) == 0.0)
    v = float(value)
    if v == 0.0:
        return True
    if abs(v) < m:
        return False
    exact = _divides_exactly(v, m)
    if exact is not None:
        return exact
    divisor = _big_fraction(m)
    return divisor == 0 or (_big_fraction(v) / divisor).denominator == 1  # x / 0 is the crate's NaN: no denominator


def _decimal_parts(value: float) -> tuple[int, int] | None:
    """``(mantissa, decimals)`` with ``value == mantissa / 10**decimals``, from its shortest text; None past i128."""
    text, _, exponent = repr(value).partition('e')
    whole, _, fraction = text.lstrip('-').partition('.')
    mantissa = int(whole + fraction)
    if mantissa > _I128_MAX:
        return None
    return (-mantissa if text.startswith('-') else mantissa), len(fraction) - int(exponent or 0)


def _divides_exactly(value: float, multiple: float) -> bool | None:
    value_parts, multiple_parts = _decimal_parts(value), _decimal_parts(multiple)
    if value_parts is None or multiple_parts is None or multiple_parts[0] == 0:
        return None
    shared = min(value_parts[1], multiple_parts[1])

    def scale(mantissa: int, decimals: int) -> int | None:
        power = 10 ** (decimals - shared)
        return mantissa * power if power <= _I128_MAX and abs(mantissa * power) <= _I128_MAX else None

    numerator, denominator = scale(value_parts[0], multiple_parts[1]), scale(multiple_parts[0], value_parts[1])
    if numerator is None or denominator is None:
        return None
    return numerator % denominator == 0


def _big_fraction(value: float) -> Fraction:
    """The ``fraction`` crate's ``From<f64>``: scale by powers of ten (``powi``) until whole, else the decimal text."""
    p = 0
    scaled = value
    while abs(math.floor(scaled) - scaled) >= 2.220446049250313e-16:
        p += 1
        scaled = value * _powi(10.0, p)
        if math.isinf(scaled):
            return Fraction(repr(value))
    numerator = int(abs(scaled))
    return Fraction(-numerator if value < 0 else numerator, int(_powi(10.0, p)))


def _powi(base: float, exponent: int) -> float:
    """LLVM's ``__powidf2`` (Rust's ``f64::powi``): repeated squaring, rounding at each step."""
    result = 1.0
    while True:
        if exponent & 1:
            result *= base
        exponent //= 2
        if exponent == 0:
            return result
        base *= base
