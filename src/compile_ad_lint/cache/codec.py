"""Data-only serialization of the analyzer's frozen dataclasses, checked against their type hints.

The cache lives in the checked repository, so its bytes are untrusted input: a planted entry must
never run code (the reason ``pickle`` is gone) and must never reach the interpreter in a shape it
does not expect. Entries are JSON; a dataclass is written as ``{"ClassName": [field, ...]}`` and
decoded only into classes reachable from the type the caller asks for, each field checked against
its annotation. Anything else raises ``SchemaError``, and the caller rebuilds the entry.

An enum member is ``{"EnumName": value}``. Other tagged forms: ``{"#set": [...]}`` (frozenset), ``{"#map": [[k, v], ...]}`` (dict),
``{"#path": "..."}``, ``{"#bytes": "hex"}``, ``{"#complex": [re, im]}``; JSON lists are tuples,
because every container in the summaries is a tuple.

A document is a graph, ``{"#graph": [node, ..., value]}``: each tuple, set, dict or record is a
node written once, and where it occurs stands ``"#N"`` (a string that starts with ``#`` gets
another in front). A root's events share their locations and values; written out whole at each
occurrence, a framework root's result decoded four times the values it holds
(docs/performance.md, "the cache's entries as graphs"). The writer refers only to earlier nodes;
the reader refuses a node that contains itself. A node is decoded the first time something refers
to it, so a field left out (``omit``) decodes nothing below it. A record is decoded once and its
class checked by each reader; a tuple, set or dict is decoded once per type it is read as (checking
a shared value again through its containers could cost the document's size to a power).

Decoding follows the type asked for: each field is decoded by a decoder built once per annotation,
which checks as it decodes (a class's tag must name a class the annotation admits, a ``str`` field
must hold a string), so a document is walked once; a field annotated ``Any`` or a union of
containers is decoded by its tags and then checked.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import sys
import types
import typing
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from ..core.collector import collector_paused

_PRIMITIVES = (type(None), bool, int, float, str)
#: Classes of this package: the only ones whose subclasses an annotation admits.
_PACKAGE = __name__.split(".")[0]


class SchemaError(ValueError):
    """The data does not describe a value of the expected type."""


class _UnknownClass(SchemaError):
    """The data names a class the schema does not admit."""


@dataclasses.dataclass(frozen=True)
class _Schema:
    """Classes a document may name, with each one's field names and checks."""

    classes: dict[str, type]
    fields: dict[type, tuple[str, ...]]
    checks: dict[type, tuple[Callable[[Any], bool], ...]]
    #: Modules that define subclasses of a base class reached (its ``SUBCLASS_MODULES``) and were
    #: not imported when the schema was made: a document naming a class unknown here is decoded
    #: again after importing them (a warm check loads the rules only to decode evidence).
    deferred: tuple[str, ...] = ()
    #: Per class, the positions of the fields left undecoded (``loads``'s ``omit``): None instead.
    omitted: dict[type, frozenset[int]] = dataclasses.field(default_factory=dict)
    #: The decoders built so far, by type hint and by class (``_typed``, ``_record``).
    decoders: dict[Any, Callable[[Any, Any], Any]] = dataclasses.field(default_factory=dict)
    records: dict[type, Callable[[Any, Any], Any]] = dataclasses.field(default_factory=dict)


#: Fields a caller does not need, as (class, field name): decoded as None, and the classes only they
#: reach are not loaded (a warm flake8 run needs no finding's evidence, nor the rules it names).
Omitted = frozenset[tuple[type, str]]


def dumps(value: object) -> bytes:
    """``value`` as compact JSON (raises ``TypeError`` for anything that is not plain data)."""
    with collector_paused():  # acyclic documents: after an analysis, collections here walked the whole heap
        return _encoded(value)


def loads(data: bytes, expected: Any, omit: Omitted = frozenset()) -> Any:
    """Decode ``data`` into a value of type ``expected`` or raise ``SchemaError``; the fields
    ``omit`` names (each of which admits None) are None, whatever the data holds there."""
    schema = _schema_for(expected, omit)
    try:
        with collector_paused():
            document = json.loads(data)
            if type(document) is dict and len(document) == 1 and "#graph" in document:
                payload = _list(document["#graph"])
                if not payload:
                    raise SchemaError("an empty graph")
                nodes, root = payload[:-1], payload[-1]
            else:  # one value written out whole (no references)
                nodes, root = [], document
            try:
                value = _typed(expected, schema)(root, _Graph(nodes, schema))
            except _UnknownClass:
                if not schema.deferred:
                    raise
                for module in schema.deferred:
                    importlib.import_module(module)
                _schema_for.cache_clear()
                schema = _schema_for(expected, omit)
                value = _typed(expected, schema)(root, _Graph(nodes, schema))
    except SchemaError:
        raise
    except (ValueError, TypeError, RecursionError, UnicodeDecodeError) as error:
        raise SchemaError(str(error)) from error
    if not _checker(expected)(value):
        raise SchemaError(f"not a {expected!r}")
    return value


# -- encoding ---------------------------------------------------------------------------------

_WRITE = json.JSONEncoder(separators=(",", ":"), allow_nan=True).encode


def _encoded(value: object) -> bytes:
    """``value`` as a graph: ``{"#graph": [node, ..., value]}``. Each value that is not a bool,
    number, string or None is a node, written once however often it occurs (equal values are
    one node, whether or not they are one object): where it occurs stands ``"#N"``, the node's
    position. A node's parts come before it, so a document has no cycle. A string that starts
    with ``#`` is written with another ``#`` in front."""
    memo: dict[int, str] = {}
    kept: list[object] = []  # what the memo names, so that no id in it is reused meanwhile
    numbers: dict[str, int] = {}
    table: list[str] = []

    def encode(item: object) -> object:
        kind = type(item)
        if kind is str:
            return "#" + item if item[:1] == "#" else item  # type: ignore[index, operator]
        if kind in _PRIMITIVE_TYPES:  # exactly: a str enum or an int subclass is tagged
            return item
        found = memo.get(id(item))
        if found is not None:
            return found
        encoder = _ENCODERS.get(kind)
        if encoder is None:
            encoder = _ENCODERS[kind] = _encoder_for(kind)
        text = _WRITE(encoder(item, encode))
        number = numbers.get(text)
        if number is None:
            number = numbers[text] = len(table)
            table.append(text)
        memo[id(item)] = reference = f"#{number}"
        kept.append(item)
        return reference

    root = _WRITE(encode(value))
    return ('{"#graph":[' + ",".join([*table, root]) + "]}").encode("utf-8")


_PRIMITIVE_TYPES = frozenset(_PRIMITIVES)
_Encode = Callable[[Any], object]
#: How each type met so far is written (chosen once per type: a cold run writes millions of values).
_ENCODERS: dict[type, Callable[[Any, _Encode], object]] = {}


def _encoder_for(kind: type) -> Callable[[Any, _Encode], object]:
    if issubclass(kind, tuple):
        return lambda value, encode: [encode(v) for v in value]
    if issubclass(kind, frozenset):
        return lambda value, encode: {"#set": [encode(v) for v in value]}
    if issubclass(kind, dict):
        return lambda value, encode: {"#map": [[encode(k), encode(v)] for k, v in value.items()]}
    if issubclass(kind, Path):
        return lambda value, encode: {"#path": str(value)}
    if issubclass(kind, bytes):
        return lambda value, encode: {"#bytes": value.hex()}
    if issubclass(kind, complex):
        return lambda value, encode: {"#complex": [value.real, value.imag]}
    name = kind.__name__
    if issubclass(kind, enum.Enum):
        return lambda value, encode: {name: value.value}
    if dataclasses.is_dataclass(kind):
        names = _field_names(kind)
        return lambda value, encode: {name: [encode(getattr(value, field)) for field in names]}

    def unsupported(value: object, encode: _Encode) -> object:
        raise TypeError(f"cannot serialize {name}")

    return unsupported


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


# -- decoding ---------------------------------------------------------------------------------

#: A form: where a value occurs in a document (a bool, number, string or None as itself; another
#: value as ``"#N"``, or written out whole); a node: what a graph's position holds.
_Decoder = Callable[[Any, "_Graph"], Any]
_UNSET, _BUSY, _UNTYPED = object(), object(), object()


class _Graph:
    """A document's nodes, each decoded when first referred to (a field left out never decodes
    what it refers to), and what each gave: a record once, whatever type reads it (the reader
    checks its class); a tuple, set or dict once per type it is read as, so that no node is walked
    again to check it and the work stays within the document's size times its types."""

    __slots__ = ("nodes", "records", "values", "schema")

    def __init__(self, nodes: list, schema: _Schema) -> None:
        self.nodes = nodes
        #: The records decoded so far, by node (``_UNSET`` before, ``_BUSY`` while decoded).
        self.records: list[Any] = [_UNSET] * len(nodes)
        #: The other nodes decoded so far, by node and type.
        self.values: dict[tuple[int, Any], Any] = {}
        self.schema = schema

    def number(self, reference: str) -> int:
        number = int(reference[1:])
        if not 0 <= number < len(self.nodes):
            raise SchemaError(f"a reference to no node: {reference[:20]!r}")
        return number

    def is_record(self, number: int) -> bool:
        if self.records[number] is not _UNSET:
            return True
        node = self.nodes[number]
        return type(node) is dict and len(node) == 1 and not next(iter(node)).startswith("#")

    def resolve(self, number: int, reading: Any, node: _Decoder) -> Any:
        """The value of node ``number`` (no record) read as ``reading`` (a type or ``_UNTYPED``),
        decoded by ``node`` the first time."""
        key = (number, reading)
        value = self.values.get(key, _BUSY)
        if value is _BUSY:
            if key in self.values:
                raise SchemaError("a node that contains itself")
            self.values[key] = _BUSY
            value = self.values[key] = node(self.nodes[number], self)
        return value

    def either(self, reference: str, reading: Any, node: _Decoder, check: Callable[[Any], bool]) -> Any:
        """The node ``reference`` names, when a record or another node may stand there (a union, an
        untyped field): a record as ``record`` gives it, another node read as ``reading``."""
        number = self.number(reference)
        if self.is_record(number):
            return self.record(reference, check)
        return self.resolve(number, reading, node)

    def record(self, reference: str, check: Callable[[Any], bool]) -> Any:
        """The record ``reference`` names, which ``check`` must admit (a class test: shallow)."""
        number = int(reference[1:])
        if not 0 <= number < len(self.nodes):
            raise SchemaError(f"a reference to no node: {reference[:20]!r}")
        value = self.records[number]
        if value is _UNSET:
            if not self.is_record(number):
                raise SchemaError("a reference to no record where one is expected")
            self.records[number] = _BUSY
            value = self.records[number] = _any_record(self.nodes[number], self)
        elif value is _BUSY:
            raise SchemaError("a node that contains itself")
        if not check(value):
            raise SchemaError(f"unexpected {type(value).__name__}")
        return value


def _is_reference(form: Any) -> bool:
    return type(form) is str and form[:1] == "#" and form[1:2] != "#"


def _decode(form: Any, graph: _Graph) -> Any:
    """``form`` decoded without a type to follow (a field annotated ``Any``, a union of
    containers): its tags say what each part is, and the caller checks the value."""
    if type(form) is str:
        if form[:1] != "#":
            return form
        if form[1:2] == "#":
            return form[1:]
        return graph.either(form, _UNTYPED, _decode_node, _anything)
    if isinstance(form, _PRIMITIVES):
        return form
    return _decode_node(form, graph)


def _anything(value: Any) -> bool:
    return True


def _any_record(node: Any, graph: _Graph) -> Any:
    ((tag, payload),) = node.items()
    return _record(_class_named(tag, graph.schema), graph.schema)(payload, graph)


def _decode_node(node: Any, graph: _Graph) -> Any:
    if isinstance(node, list):
        return tuple([_decode(item, graph) for item in node])
    if isinstance(node, _PRIMITIVES):  # a node is no primitive in what ``dumps`` writes
        return _decode(node, graph)
    if not isinstance(node, dict) or len(node) != 1:
        raise SchemaError("malformed value")
    ((tag, payload),) = node.items()
    if tag == "#set":
        return frozenset([_decode(item, graph) for item in _list(payload)])
    if tag == "#map":
        return {_decode(k, graph): _decode(v, graph) for k, v in _pairs(payload)}
    if tag == "#path":
        return Path(_str(payload))
    if tag == "#bytes":
        return bytes.fromhex(_str(payload))
    if tag == "#complex":
        real, imaginary = _list(payload)
        if not all(isinstance(part, (int, float)) and not isinstance(part, bool) for part in (real, imaginary)):
            raise SchemaError("malformed complex number")
        return complex(real, imaginary)
    return _record(_class_named(tag, graph.schema), graph.schema)(payload, graph)


def _class_named(tag: str, schema: _Schema) -> type:
    cls = schema.classes.get(tag)
    if cls is None:
        raise _UnknownClass(f"unexpected type {tag!r}")
    return cls


def _record(cls: Any, schema: _Schema) -> _Decoder:
    """The decoder of a class's payload (an enum's value, a dataclass's fields in order), each
    field decoded as its annotation says (``_typed``)."""
    found = schema.records.get(cls)
    if found is not None:
        return found
    if issubclass(cls, enum.Enum):

        def member(payload: Any, graph: _Graph) -> Any:
            try:
                return cls(payload)
            except ValueError as error:
                raise SchemaError(f"{cls.__name__}: {error}") from error

        schema.records[cls] = member
        return member
    names = schema.fields[cls]
    hints = _hints(cls)
    omitted = schema.omitted.get(cls, frozenset())
    count = len(names)
    tag = cls.__name__
    decoders: list[_Decoder] = []

    def record(payload: Any, graph: _Graph) -> Any:
        if type(payload) is not list or len(payload) != count:
            raise SchemaError(f"{tag}: expected {count} fields")
        return cls(*[decode(item, graph) for decode, item in zip(decoders, payload)])

    schema.records[cls] = record  # before the fields' decoders: a class may contain itself
    decoders.extend(_omitted if i in omitted else _typed(hints[name], schema) for i, name in enumerate(names))
    return record


def _omitted(form: Any, graph: _Graph) -> None:
    return None


def _typed(hint: Any, schema: _Schema) -> _Decoder:
    """The decoder of a form that must be a ``hint``: it decodes and checks in one pass, as
    decoding without the type (``_decode``) and then checking the value (``_checker``) does."""
    found = schema.decoders.get(hint)
    if found is not None:
        return found
    built: list[_Decoder] = []
    schema.decoders[hint] = lambda form, graph: built[0](form, graph)  # a hint met again while building its own
    decoder = _build_typed(hint, schema)
    built.append(decoder)
    schema.decoders[hint] = decoder
    return decoder


def _build_typed(hint: Any, schema: _Schema) -> _Decoder:
    check = _checker(hint)
    if hint is Any or hint is object:
        return _decode
    if hint is str:

        def text(form: Any, graph: _Graph) -> Any:
            if type(form) is not str:
                raise SchemaError(f"unexpected {type(form).__name__}")
            if form[:1] == "#":
                if form[1:2] != "#":
                    raise SchemaError("a reference where a string is expected")
                return form[1:]
            return form

        return text
    if hint in (int, float, bool) or hint is None or hint is type(None):
        # JSON gives exactly these types (a bool is no int here, as ``_checker`` says).
        kinds = {float: (int, float), None: (type(None),)}.get(hint, (hint,))

        def primitive(form: Any, graph: _Graph) -> Any:
            if type(form) not in kinds:
                raise SchemaError(f"unexpected {type(form).__name__}")
            return form

        return primitive
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union(hint, arguments, check, schema)
    node = _node_decoder(hint, origin, arguments, schema)
    if node is None:
        return lambda form, graph: _checked(_decode(form, graph), check)

    is_class = isinstance(hint, type) and (dataclasses.is_dataclass(hint) or issubclass(hint, enum.Enum))

    def value(form: Any, graph: _Graph) -> Any:
        if type(form) is str:
            if form[:1] == "#" and form[1:2] != "#":
                if is_class:
                    return graph.record(form, check)
                return graph.resolve(graph.number(form), hint, node)
            raise SchemaError("unexpected str")
        return node(form, graph)  # written out whole

    return value


def _node_decoder(hint: Any, origin: Any, arguments: tuple, schema: _Schema) -> _Decoder | None:
    """The decoder of a node that must be a ``hint`` (a tuple, set, dict or class); None for
    another annotation, decoded untyped and checked."""
    if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
        item = _typed(arguments[0], schema)
        return lambda node, graph: tuple([item(each, graph) for each in _list(node)])
    if origin is tuple and arguments and Ellipsis not in arguments:
        positions = [_typed(argument, schema) for argument in arguments]

        def fixed(node: Any, graph: _Graph) -> Any:
            if len(_list(node)) != len(positions):
                raise SchemaError(f"expected {len(positions)} items")
            return tuple([decode(each, graph) for decode, each in zip(positions, node)])

        return fixed
    if origin in (frozenset, set):
        member = _typed(arguments[0] if arguments else Any, schema)
        return lambda node, graph: frozenset([member(each, graph) for each in _list(_tagged(node, "#set"))])
    if origin is dict:
        key, entry = (_typed(a, schema) for a in arguments) if arguments else (_decode, _decode)
        return lambda node, graph: {key(k, graph): entry(v, graph) for k, v in _pairs(_tagged(node, "#map"))}
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or issubclass(hint, enum.Enum)):
        by_tag: dict[str, _Decoder] = {}

        def instance(node: Any, graph: _Graph) -> Any:
            if type(node) is not dict or len(node) != 1:
                raise SchemaError("malformed value")
            for tag, payload in node.items():
                decode = by_tag.get(tag)
                if decode is None:
                    cls = _class_named(tag, schema)
                    if not issubclass(cls, hint):
                        raise SchemaError(f"{tag}: not a {hint.__name__}")
                    decode = by_tag[tag] = _record(cls, schema)
                return decode(payload, graph)

        return instance
    return None


def _union(hint: Any, arguments: tuple, check: Callable[[Any], bool], schema: _Schema) -> _Decoder:
    """A union: ``None`` or a class's tag decide at once (``Value | None``, the abstract values'
    union); anything else is decoded untyped and checked."""
    options = [argument for argument in arguments if argument is not type(None)]
    admits_none = len(options) < len(arguments)
    if len(options) == 1:
        only = _typed(options[0], schema)
        return lambda form, graph: None if form is None and admits_none else only(form, graph)
    classes = tuple(option for option in options if isinstance(option, type) and dataclasses.is_dataclass(option))

    def node(raw: Any, graph: _Graph) -> Any:
        if type(raw) is dict and len(raw) == 1:
            ((tag, payload),) = raw.items()
            if not tag.startswith("#"):
                cls = _class_named(tag, schema)
                if classes and issubclass(cls, classes):
                    return _record(cls, schema)(payload, graph)
        return _checked(_decode_node(raw, graph), check)

    def either(form: Any, graph: _Graph) -> Any:
        if form is None and admits_none:
            return None
        if _is_reference(form):
            return graph.either(form, hint, node, check)
        if type(form) in (list, dict):
            return node(form, graph)
        return _checked(_decode(form, graph), check)

    return either


def _checked(value: Any, check: Callable[[Any], bool]) -> Any:
    if not check(value):
        raise SchemaError(f"unexpected {type(value).__name__}")
    return value


def _tagged(node: Any, tag: str) -> Any:
    if type(node) is not dict or len(node) != 1:
        raise SchemaError("malformed value")
    ((found, payload),) = node.items()
    if found != tag:
        raise SchemaError(f"expected {tag}, got {found!r}")
    return payload


def _pairs(payload: Any) -> list:
    pairs = [_list(pair) for pair in _list(payload)]
    if any(len(pair) != 2 for pair in pairs):
        raise SchemaError("malformed mapping")
    return pairs


def _list(payload: object) -> list:
    if not isinstance(payload, list):
        raise SchemaError("expected a list")
    return payload


def _str(payload: object) -> str:
    if not isinstance(payload, str):
        raise SchemaError("expected a string")
    return payload


# -- schema from type hints -------------------------------------------------------------------


@cache
def _schema_for(expected: Any, omit: Omitted = frozenset()) -> _Schema:
    """Every dataclass reachable from ``expected`` through field annotations (but those ``omit``
    names), with their checks."""
    classes: dict[str, type] = {}
    deferred: dict[str, None] = {}
    pending = [expected]
    seen: set[int] = set()
    while pending:
        hint = pending.pop()
        if id(hint) in seen:
            continue
        seen.add(id(hint))
        if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or issubclass(hint, enum.Enum)):
            if classes.setdefault(hint.__name__, hint) is not hint:
                raise TypeError(f"two cacheable classes named {hint.__name__}")
            if dataclasses.is_dataclass(hint):
                pending.extend(h for name, h in _hints(hint).items() if (hint, name) not in omit)
        if isinstance(hint, type) and hint.__module__.startswith(_PACKAGE):
            # A base class of ours (``Evidence``) admits the dataclasses derived from it: those
            # imported now, and those its ``SUBCLASS_MODULES`` define once they are.
            deferred.update((m, None) for m in getattr(hint, "SUBCLASS_MODULES", ()) if m not in sys.modules)
            pending.extend(hint.__subclasses__())
        pending.extend(typing.get_args(hint))
    records = [cls for cls in classes.values() if dataclasses.is_dataclass(cls)]
    fields = {cls: _field_names(cls) for cls in records}
    checks = {cls: tuple(_checker(_hints(cls)[name]) for name in fields[cls]) for cls in records}
    omitted: dict[type, frozenset[int]] = {}
    for cls, name in omit:
        if cls in fields:
            if not _checker(_hints(cls)[name])(None):
                raise TypeError(f"{cls.__name__}.{name} cannot be omitted: it does not admit None")
            omitted[cls] = omitted.get(cls, frozenset()) | {fields[cls].index(name)}
    return _Schema(classes, fields, checks, tuple(deferred), omitted)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@cache
def _checker(hint: Any) -> Callable[[Any], bool]:
    """A predicate for "``value`` is an instance of ``hint``" (the subset of typing we use)."""
    if hint is Any or hint is object:
        return lambda value: True
    if hint is None or hint is type(None):
        return lambda value: value is None
    if hint is float:
        return lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return lambda value: isinstance(value, int) and not isinstance(value, bool)
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = tuple(_checker(option) for option in arguments)
        return lambda value: any(option(value) for option in options)
    if origin is tuple:
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            item = _checker(arguments[0])
            return lambda value: isinstance(value, tuple) and all(item(v) for v in value)
        positions = tuple(_checker(argument) for argument in arguments)
        return lambda value: (
            isinstance(value, tuple) and len(value) == len(positions) and all(c(v) for c, v in zip(positions, value))
        )
    if origin in (frozenset, set):
        item = _checker(arguments[0]) if arguments else _checker(Any)
        return lambda value: isinstance(value, frozenset) and all(item(v) for v in value)
    if origin is dict:
        key, item = (_checker(a) for a in arguments) if arguments else (_checker(Any), _checker(Any))
        return lambda value: isinstance(value, dict) and all(key(k) and item(v) for k, v in value.items())
    if isinstance(hint, type):
        return lambda value: isinstance(value, hint)
    raise TypeError(f"unsupported annotation in a cached type: {hint!r}")
