"""The environment variables the package reads: one typed registry, read once, on first use.

Where this sits on the request path: nowhere on it for the engine's choices, which are fields of
`EngineConfig` (`minisgl_edu/engine/config.py`). What is left here are the settings that belong to
the machine or to a debugging run rather than to one engine, and are read far from any config:

| variable | type | default | what it does |
|---|---|---|---|
| `MINISGL_EDU_PDL` | bool | `1` | launch our Triton kernels with programmatic dependent launch on Hopper or newer (`kernels/pdl.py`); `0` to rule it out when chasing a race |
| `TRITON_INTERPRET` | bool | `0` | Triton's own: run kernels on the CPU with numpy (`tests/test_kernels_interpreter.py`); PDL is off under it |

(`MINISGL_EDU_CACHE`, where the bundled model is converted to, is read by `models/convert.py` each
time it looks for the cache, so that a test can point it elsewhere.)

Nothing is read at import time: `get()` reads the environment the first time it is called, and
every later call returns the same values (a process that wants other values starts with other
variables, as the GPU scripts do). `reset()` forgets them, for tests.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    if value.strip().lower() in ("0", "false", "no", "off"):
        return False
    if value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name}={value!r}: expected 0 or 1")


@dataclass(frozen=True)
class Env:
    pdl: bool  # MINISGL_EDU_PDL
    triton_interpret: bool  # TRITON_INTERPRET (Triton reads it itself; we only need to know)


@functools.cache
def get() -> Env:
    """The registry's values, read from the environment on the first call."""
    return Env(
        pdl=_flag("MINISGL_EDU_PDL", True),
        triton_interpret=os.environ.get("TRITON_INTERPRET") == "1",
    )


def reset() -> None:
    """Read the environment again at the next `get()` (tests that change a variable)."""
    get.cache_clear()
