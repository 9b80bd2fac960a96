"""The package's imports form layers with no circle, as docs/architecture.md's table says.

Every import counts: at the top of a file, under TYPE_CHECKING and inside a function, because a
reader follows each of them, and a circle through the data model (core.py) makes every module of
it depend on every other. The table is read from the doc, so the doc and the code cannot drift.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minisgl_edu"
DOC = ROOT / "docs" / "architecture.md"


def _layers() -> dict[str, int]:
    """`| 3 | `models` |` rows of the doc's layer table -> {"models": 3, ...}."""
    layers = {}
    for number, names in re.findall(r"^\| (\d) \| (.+) \|$", DOC.read_text(), flags=re.M):
        for name in re.findall(r"`(\w+)`", names):
            layers[name] = int(number)
    return layers


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def _imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the package's modules it imports (`from pkg import submodule` names the submodule)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
                targets = subs + ([base] if len(subs) < len(node.names) else [])
            else:
                continue
            edges[name].update(t for t in targets if t in mods and t != name)
    return edges


def _part(module: str) -> str:
    """minisgl_edu.engine.sampler -> engine; minisgl_edu.core -> core; minisgl_edu -> minisgl_edu."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_the_doc_names_every_part_of_the_package_once():
    layers = _layers()
    parts = {_part(m) for m in _modules()}
    assert parts - set(layers) == set(), f"in no layer of docs/architecture.md: {sorted(parts - set(layers))}"
    assert set(layers) - parts == set(), f"the layer table names what is not there: {sorted(set(layers) - parts)}"


def test_no_import_goes_up_a_layer():
    layers = _layers()
    up = [
        f"{a} (layer {layers[_part(a)]}) imports {b} (layer {layers[_part(b)]})"
        for a, targets in sorted(_imports(_modules()).items())
        for b in sorted(targets)
        if layers[_part(b)] > layers[_part(a)]
    ]
    assert up == [], "\n".join(up)


def test_no_circle_of_imports():
    edges = _imports(_modules())
    circles, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            circles.append(path[path.index(module) :] + [module])
            return
        if module in done:
            return
        for target in sorted(edges.get(module, ())):
            visit(target, path + [module])
        done.add(module)

    for module in sorted(_modules()):
        visit(module, [])
    assert circles == [], "\n".join(" -> ".join(c) for c in circles)
