"""How many bytes a cached value holds: a deep ``sys.getsizeof`` that samples long collections.

What the caches hold is plain Python: thrift structs (tables, partitions), tuples of names, listings of
named tuples, dataclasses of footer facts, pydantic models of Iceberg metadata, dictionaries of scan plans.
A value is walked through its containers and its objects' fields, adding ``sys.getsizeof`` of every object
once: an object reached twice within one value (a table's parameters, from its detection too) counts once.
A string of up to 64 characters is counted each time it is reached, which costs at most its few dozen bytes
and spares the walk a lookup for every name and type string.

An object's fields are read by name, never through ``__dict__``: reading ``__dict__`` makes CPython build a
dictionary the object did not have, so measuring would grow what it measures. The names come from the
class, once per class: a thrift struct's ``thrift_spec``, a dataclass's fields, a pydantic model's fields,
``__slots__``; an object of any other class is read through ``__dict__`` after all. Its field values take
8 bytes each beside it (CPython keeps them in an array of pointers); the field names are the class's,
shared by every instance, and are not counted.

Why it samples: a list of 100,000 partition names or a plan of 50,000 file tasks would cost as much to
walk as to load. A collection of more than ``SAMPLED_ABOVE`` items has ``SAMPLES`` of them, evenly spaced,
walked, and the rest counted at their median: the caches' collections hold items of one kind, so the
estimate is close. Below ``MAX_DEPTH`` levels only an object's own size is counted.

What it leaves out, because it is not the entry's: classes, functions, modules and locks (shared by every
entry), and ``None``, ``True`` and ``False`` (one object each per process). Memory outside the Python heap
(a pyarrow buffer) is not seen; no cache holds any.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["MAX_DEPTH", "SAMPLED_ABOVE", "SAMPLES", "batch_sizes", "collection_sizes", "deep_size"]

SAMPLED_ABOVE = 64  # a collection of more items is sampled
SAMPLES = 16  # items walked of a sampled collection
MAX_DEPTH = 16  # levels walked below the value
_SHORT = 64  # a string of at most this many characters is counted wherever it is reached
_POINTER = 8  # bytes of one field value's slot beside its object
_VALUES_HEADER = 16  # the array of an object's field values, besides its slots

_FLAT: frozenset[type] = frozenset({str, bytes, bytearray, int, float, complex, range, memoryview})
_FREE: frozenset[type] = frozenset({type(None), bool, type(Ellipsis), type(NotImplemented)})
_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.MethodWrapperType, types.CodeType, type(threading.Lock()), type(threading.RLock()))
_getsizeof = sys.getsizeof


def deep_size(value: object) -> int:
    """The bytes ``value`` and what it holds take on the Python heap (estimated for long collections)."""
    return _size(value, set(), MAX_DEPTH)


def batch_sizes(values: Sequence[T], weigh: Callable[[T], int] = deep_size) -> list[int]:
    """The size of each of ``values`` loaded together by one call (a batch of one table's partitions), which
    are alike: ``SAMPLES`` of them, evenly spaced, are weighed, and the others are given their median."""
    count = len(values)
    if count <= SAMPLES:
        return [weigh(value) for value in values]
    weighed = {index * count // SAMPLES: 0 for index in range(SAMPLES)}
    for index in weighed:
        weighed[index] = weigh(values[index])
    median = sorted(weighed.values())[SAMPLES // 2]
    return [weighed.get(index, median) for index in range(count)]


def collection_sizes(collections: Sequence[Sequence[Any]]) -> list[int]:
    """The size of each of ``collections`` loaded together (a chunk of one table's listings: a tuple of files
    each), whose items are alike but whose lengths are not: ``SAMPLES`` of the non-empty ones, evenly spaced, are
    weighed, and each other one is charged its own container and its length at the sampled items' median size.
    The median of :func:`batch_sizes` would charge a folder of a thousand files as much as one of a single file;
    samples taken among empty ones (a table of many empty partitions) would charge every file nothing."""
    filled = [index for index, collection in enumerate(collections) if collection]
    if len(filled) <= SAMPLES:
        return [deep_size(collection) for collection in collections]
    weighed = {filled[index * len(filled) // SAMPLES]: 0 for index in range(SAMPLES)}
    per_item = []
    for index in weighed:
        collection = collections[index]
        weighed[index] = size = deep_size(collection)
        per_item.append((size - _getsizeof(collection)) / len(collection))
    item = sorted(per_item)[len(per_item) // 2]
    return [weighed[index] if index in weighed else _getsizeof(collection) + round(item * len(collection))
            for index, collection in enumerate(collections)]


def _size(obj: object, seen: set[int], depth: int) -> int:
    kind: type = type(obj)
    if kind in _FLAT:
        if kind is str and len(obj) > _SHORT:  # type: ignore[arg-type]  # a long string may be shared: once
            if id(obj) in seen:
                return 0
            seen.add(id(obj))
        return _getsizeof(obj)
    if kind in _FREE:
        return 0
    ident = id(obj)
    if ident in seen:
        return 0
    seen.add(ident)
    if depth <= 0:
        return _getsizeof(obj)
    depth -= 1
    way, names = _way(kind)
    if way is _FIELDS:
        size = _getsizeof(obj) + (_POINTER * len(names) + _VALUES_HEADER if kind.__dictoffset__ else 0)
        for name in names:
            value = getattr(obj, name, None)
            if value is not None:
                size += _getsizeof(value) if type(value) is str and len(value) <= _SHORT else _size(value, seen, depth)
        return size
    if way is _ITEMS:
        return _getsizeof(obj) + _items(obj, len(obj), seen, depth)  # type: ignore[arg-type]
    if way is _PAIRS:
        return _getsizeof(obj) + _pairs(obj, seen, depth)  # type: ignore[arg-type]
    if way is _SHARED_WAY:
        return 0
    size = _getsizeof(obj)  # fields not declared: read through __dict__ after all, and slots
    held = getattr(obj, "__dict__", None)
    if held is not None:
        size += _POINTER * len(held) + _VALUES_HEADER
        for value in held.values():
            size += _getsizeof(value) if type(value) is str and len(value) <= _SHORT else _size(value, seen, depth)
    for name in names:
        size += _size(getattr(obj, name, None), seen, depth)
    if held is None and not names and isinstance(obj, Mapping):
        size += _pairs(obj, seen, depth)  # a mapping that keeps its items out of sight (MappingProxyType)
    return size


def _items(items: Any, count: int, seen: set[int], depth: int) -> int:
    if count > SAMPLED_ABOVE:
        step = count // SAMPLES
        return _extrapolated([_size(item, seen, depth) for item in islice(items, 0, step * SAMPLES, step)], count)
    return sum(_getsizeof(item) if type(item) is str and len(item) <= _SHORT else _size(item, seen, depth) for item in items)


def _pairs(mapping: Mapping[Any, Any], seen: set[int], depth: int) -> int:
    count = len(mapping)
    pairs = mapping.items()
    if count > SAMPLED_ABOVE:
        step = count // SAMPLES
        sampled = islice(pairs, 0, step * SAMPLES, step)
        return _extrapolated([_size(key, seen, depth) + _size(value, seen, depth) for key, value in sampled], count)
    return sum(_size(key, seen, depth) + _size(value, seen, depth) for key, value in pairs)


def _extrapolated(sampled: list[int], count: int) -> int:
    """The sampled items as measured, the others at the sample's median: an object the items share (one
    residual filter of every task of a plan) is counted in the first sample that reaches it, and the
    median keeps it from being multiplied by the count."""
    return sum(sampled) + sorted(sampled)[len(sampled) // 2] * (count - len(sampled))


_FIELDS, _ITEMS, _PAIRS, _SHARED_WAY, _ATTRIBUTES = "fields", "items", "pairs", "shared", "attributes"


@functools.lru_cache(maxsize=1024)
def _way(kind: type) -> tuple[str, tuple[str, ...]]:
    """How objects of ``kind`` are walked, found once per class: by their declared field names (a thrift
    struct's ``thrift_spec``, a dataclass's or pydantic model's fields, and slots), as a collection, as a
    mapping, not at all (shared), or through ``__dict__`` and slots."""
    if issubclass(kind, (tuple, list, set, frozenset)):
        return _ITEMS, ()
    if issubclass(kind, dict):
        return _PAIRS, ()
    if issubclass(kind, _SHARED):
        return _SHARED_WAY, ()
    spec = getattr(kind, "thrift_spec", None)
    if isinstance(spec, tuple):
        declared: tuple[str, ...] = tuple(field[2] for field in spec if field is not None)
    elif dataclasses.is_dataclass(kind):
        declared = tuple(field.name for field in dataclasses.fields(kind))
    elif isinstance(getattr(kind, "model_fields", None), dict):  # a pydantic model
        declared = tuple(kind.model_fields)  # type: ignore[attr-defined]
    else:
        return _ATTRIBUTES, _slots(kind)
    return _FIELDS, declared + tuple(name for name in _slots(kind) if name not in declared)


def _slots(kind: type) -> tuple[str, ...]:
    """The slot names of ``kind`` and its bases (``__dict__`` and ``__weakref__`` aside); :func:`_way` keeps them."""
    names: list[str] = []
    for base in kind.__mro__:
        declared = base.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if name not in ("__dict__", "__weakref__"):
                mangled = f"_{base.__name__.lstrip('_')}{name}" if name.startswith("__") and not name.endswith("__") else name
                if mangled not in names:
                    names.append(mangled)
    return tuple(names)
