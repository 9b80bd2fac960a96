"""Turn messages into bytes and back, for the ZeroMQ sockets between the processes.

Where this sits on the request path: on every hop. The API server encodes a `TokenizeMsg`, the
tokenizer worker decodes it and encodes a `UserMsg` for the scheduler, the scheduler encodes
`DetokenizeMsg`s, the detokenizer decodes them and encodes `UserReply`s for the API server.

The format is msgpack. A dataclass becomes a map holding its fields plus one extra key, `__type__`,
with the class name; nested dataclasses (the `SamplingParams` inside a `UserMsg`, the messages
inside a `BatchBackendMsg`) are encoded the same way. msgpack walks the message itself and calls
back into Python only for a dataclass (on the way out) and a map (on the way in), so a prompt's
token ids or a step's messages cost little per item. Decoding looks the name up in
a registry of known classes. Why not pickle? Unpickling runs whatever code the bytes ask for, so
any process that can reach a socket could run code in ours; here the bytes can only ever become
one of the registered message classes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgpack

from minisgl_edu.core import SamplingParams
from minisgl_edu.message import backend, frontend, tokenizer

TYPE_KEY = "__type__"

_REGISTRY: dict[str, type] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}  # each registered class's field names, looked up once


def register(cls: type) -> type:
    """Allow `cls` (a dataclass) to travel through `encode` / `decode`. Usable as a decorator."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    _REGISTRY[cls.__name__] = cls
    _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return cls


def _register_module(module: Any) -> None:
    for value in vars(module).values():
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
            register(value)


for _module in (backend, frontend, tokenizer):
    _register_module(_module)
register(SamplingParams)


def _tagged(obj: Any) -> dict:
    """msgpack's `default` hook, called for each object msgpack cannot write itself: a registered
    dataclass becomes a map of its fields tagged with its class name. msgpack then writes the
    fields, calling this again for a nested dataclass; lists of token ids stay in msgpack's C code.
    """
    names = _FIELDS.get(type(obj))
    if names is None:
        raise TypeError(f"{type(obj).__qualname__} is not a registered message type")
    out = {TYPE_KEY: type(obj).__name__}
    for name in names:
        value = out[name] = getattr(obj, name)
        if type(value) is dict and TYPE_KEY in value:
            raise ValueError(f"a plain dict may not use the reserved key {TYPE_KEY!r}")
    return out


def _untagged(fields: dict) -> Any:
    """msgpack's `object_hook`, called for each map as it is read (inner maps first): a tagged
    map becomes its dataclass again, any other map stays a dict."""
    name = fields.pop(TYPE_KEY, None)
    if name is None:
        return fields
    cls = _REGISTRY.get(name)
    if cls is None:
        raise ValueError(f"unknown message type {name!r}")
    return cls(**fields)


def encode(msg: Any) -> bytes:
    """A message (or any nesting of registered dataclasses, lists, dicts, scalars) -> bytes."""
    return msgpack.packb(msg, default=_tagged, use_bin_type=True)


def decode(data: bytes) -> Any:
    """The inverse of `encode` (a tuple comes back as a list)."""
    # strict_map_key=False: `SamplingParams.logit_bias` maps token ids (ints) to numbers.
    return msgpack.unpackb(data, object_hook=_untagged, raw=False, strict_map_key=False)
