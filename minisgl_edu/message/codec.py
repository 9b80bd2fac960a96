"""Turn messages into bytes and back, for the ZeroMQ sockets between the processes.

Where this sits on the request path: on every hop. The API server encodes a `TokenizeMsg`, the
tokenizer worker decodes it and encodes a `UserMsg` for the scheduler, the scheduler encodes
`DetokenizeMsg`s, the detokenizer decodes them and encodes `UserReply`s for the API server.

The format is msgpack. A dataclass becomes a map holding its fields plus one extra key, `__type__`,
with the class name; nested dataclasses (the `SamplingParams` inside a `UserMsg`, the messages
inside a `BatchBackendMsg`) are encoded the same way, recursively. Decoding looks the name up in
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


def register(cls: type) -> type:
    """Allow `cls` (a dataclass) to travel through `encode` / `decode`. Usable as a decorator."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    _REGISTRY[cls.__name__] = cls
    return cls


def _register_module(module: Any) -> None:
    for value in vars(module).values():
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
            register(value)


for _module in (backend, frontend, tokenizer):
    _register_module(_module)
register(SamplingParams)


def _to_plain(obj: Any) -> Any:
    """Dataclasses -> dicts tagged with their class name; lists and dicts recursively."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        name = type(obj).__name__
        if _REGISTRY.get(name) is not type(obj):
            raise TypeError(f"{name} is not a registered message type")
        out = {TYPE_KEY: name}
        for f in dataclasses.fields(obj):
            out[f.name] = _to_plain(getattr(obj, f.name))
        return out
    if isinstance(obj, (list, tuple)):
        return [_to_plain(x) for x in obj]
    if isinstance(obj, dict):
        if TYPE_KEY in obj:
            raise ValueError(f"a plain dict may not use the reserved key {TYPE_KEY!r}")
        return {k: _to_plain(v) for k, v in obj.items()}
    return obj


def _from_plain(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_from_plain(x) for x in obj]
    if isinstance(obj, dict):
        fields = {k: _from_plain(v) for k, v in obj.items() if k != TYPE_KEY}
        if TYPE_KEY not in obj:
            return fields
        name = obj[TYPE_KEY]
        cls = _REGISTRY.get(name)
        if cls is None:
            raise ValueError(f"unknown message type {name!r}")
        return cls(**fields)
    return obj


def encode(msg: Any) -> bytes:
    """A message (or any nesting of registered dataclasses, lists, dicts, scalars) -> bytes."""
    return msgpack.packb(_to_plain(msg), use_bin_type=True)


def decode(data: bytes) -> Any:
    """The inverse of `encode`."""
    # strict_map_key=False: `SamplingParams.logit_bias` maps token ids (ints) to numbers.
    return _from_plain(msgpack.unpackb(data, raw=False, strict_map_key=False))
