"""The environment variables the package reads: one typed registry, read once, on first use.

Where this sits on the request path: nowhere on it for the engine's choices, which are fields of
`EngineConfig` (`minisgl_edu/engine/config.py`). What is left here are the settings that belong to
the machine or to a debugging run rather than to one engine, and are read far from any config:

| variable | type | default | what it does |
|---|---|---|---|
| `MINISGL_EDU_PDL` | bool | `1` | launch our Triton kernels with programmatic dependent launch on Hopper or newer (`kernels/pdl.py`); `0` to rule it out when chasing a race |
| `TRITON_INTERPRET` | bool | `0` | Triton's own: run kernels on the CPU with numpy (`tests/test_kernels_interpreter.py`); PDL is off under it |
| `MINISGL_EDU_CACHE` | path | `~/.cache/minisgl_edu` | where the bundled model is converted to, once (`models/convert.py`) |
| `MINISGL_API_KEY` | str | unset | the default of `--api-key` (the environment keeps the key out of `ps`) |

Nothing is read at import time: `get()` reads the environment the first time it is called, and
every later call returns the same values (a process that wants other values starts with other
variables, as the GPU scripts do). `reset()` forgets them, for tests.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Optional


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
    cache_dir: str  # MINISGL_EDU_CACHE
    api_key: Optional[str]  # MINISGL_API_KEY


@functools.cache
def get() -> Env:
    """The registry's values, read from the environment on the first call."""
    return Env(
        pdl=_flag("MINISGL_EDU_PDL", True),
        triton_interpret=os.environ.get("TRITON_INTERPRET") == "1",
        cache_dir=os.environ.get("MINISGL_EDU_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "minisgl_edu"),
        api_key=os.environ.get("MINISGL_API_KEY") or None,
    )


def reset() -> None:
    """Read the environment again at the next `get()` (tests that change a variable)."""
    get.cache_clear()
