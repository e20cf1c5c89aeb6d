"""The house's rules (docs/ARCHITECTURE.md), read off the source: every import, lazy ones inside functions included,
goes down the order of rooms or stays in its room; no import cycle between modules; the CLI's command modules do not
import each other; nothing is imported but under a module's own name."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("gpu", "fp", "algebra", "charts", "nassau")

#: The rooms from the floor up: a module may import its own room and the rooms before it, never one after it.
ORDER = (
    "gpu",
    "fp",
    "algebra.milnor",
    "algebra.free",
    "algebra.module",
    "algebra.secondary",
    "algebra.unstable",
    "algebra",
    "charts",
    "nassau.engine",
    "nassau.store",
    "nassau.cost",
    "nassau.lifting",
    "nassau.products",
    "nassau.secondary",
    "nassau.tools",
    "nassau.api",
    "nassau.cli",
    "nassau",
)
#: The CLI modules that command modules may import: what they share. The entry point and the dispatcher import the
#: command modules.
CLI_SHARED = ("nassau.cli.common",)
CLI_DISPATCH = ("nassau.cli.entry", "nassau.cli.main")


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name -> file of every module of the project's packages."""
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"))


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `name` imports, anywhere in the file (a function's lazy import too), except under
    `if TYPE_CHECKING:` (annotations, never run)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skipped = {id(n) for node in ast.walk(tree) if _type_checking(node) for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            # `from P import X` imports the module P.X when there is one, else P itself.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def room(name: str) -> int:
    """The place in ORDER of the room holding the module (its longest listed prefix)."""
    best = max((p for p in ORDER if name == p or name.startswith(p + ".")), key=len)
    return ORDER.index(best)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def levels(edges: dict[str, set[str]]) -> int:
    """The longest chain of imports (a module importing nothing of ours is level 1)."""
    memo: dict[str, int] = {}

    def depth(v: str) -> int:
        if v not in memo:
            memo[v] = 0  # a cycle would recurse forever; the cycle test reports it
            memo[v] = 1 + max((depth(w) for w in edges[v]), default=0)
        return memo[v]

    return max(depth(v) for v in edges)


def test_every_import_goes_down_the_order() -> None:
    edges = graph()
    upward = [f"{a} -> {b}" for a, targets in sorted(edges.items()) for b in sorted(targets) if room(b) > room(a)]
    assert not upward, "imports up the order of rooms (docs/ARCHITECTURE.md):\n" + "\n".join(upward)


def test_no_import_cycle() -> None:
    found = cycles(graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_command_modules_do_not_import_each_other() -> None:
    edges = graph()
    commands = [a for a in sorted(edges) if a.startswith("nassau.cli.") and a not in CLI_DISPATCH]
    bad = [f"{a} -> {b}" for a in commands for b in sorted(edges[a])
           if b.startswith("nassau.cli") and b not in CLI_SHARED]
    assert not bad, "CLI command modules importing one another: " + ", ".join(bad)


def test_gpu_is_a_backend_importing_nothing_of_ours() -> None:
    edges = graph()
    bad = [f"{a} -> {b}" for a, targets in sorted(edges.items()) if a.startswith("gpu") for b in targets
           if not b.startswith("gpu")]
    assert not bad, bad


def test_fp_and_algebra_reach_the_gpu_through_one_entry_point_each() -> None:
    edges = graph()
    entry = {"fp": "gpu.rref", "algebra": "gpu.products"}
    bad = [f"{a} -> {b}" for a, targets in sorted(edges.items()) for b in sorted(targets)
           if b.startswith("gpu") and a.split(".")[0] in entry and b != entry[a.split(".")[0]]]
    assert not bad, bad


def test_every_module_has_a_room() -> None:
    for name in modules():
        assert room(name) >= 0


IMPORT_EVERYTHING = """
import gc, importlib, pkgutil
for package in ("gpu", "fp", "algebra", "charts", "nassau"):
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        if not info.name.endswith(("__main__", "compile_helper")):
            importlib.import_module(info.name)
from numba.core import caching, event
listeners = [type(x).__module__ for xs in event._registered.values() for x in xs]
print(gc.isenabled(), gc.get_freeze_count(), getattr(caching.Cache.load_overload, "without_refresh", False),
      any(m.startswith(("fp", "algebra", "nassau")) for m in listeners))
"""


def test_importing_any_module_changes_no_process_wide_setting() -> None:
    """Process-wide settings (the collector, numba's kernel loading, numba listeners) are made by the entry points
    and the run that needs them, never by importing a module: a program that imports nassau as a library keeps its
    process as it was."""
    out = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["True", "0", "False", "False"], out.stdout


# -- the checker itself: it must see what it claims to see ---------------------------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    known = modules(tmp_path)
    return {name: imports(name, path, known) for name, path in known.items()}


def test_the_checker_sees_lazy_relative_and_from_imports(tmp_path: Path) -> None:
    edges = _tree(tmp_path, {
        "fp/__init__.py": "",
        "fp/a.py": "def f():\n    from nassau.engine import b\n",
        "fp/c.py": "from . import a\nfrom .a import f\n",
        "nassau/__init__.py": "",
        "nassau/engine/__init__.py": "",
        "nassau/engine/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import fp.c\n"
                              "import fp.a as x\n",
    })
    assert edges["fp.a"] == {"nassau.engine.b"}  # a lazy import, and upward
    assert edges["fp.c"] == {"fp.a"}
    assert edges["nassau.engine.b"] == {"fp.a"}  # the TYPE_CHECKING import is not counted
    assert room("fp.a") < room("nassau.engine.b")
    assert cycles(edges) == [["fp.a", "nassau.engine.b"]]


@pytest.mark.parametrize("name, expected", [("nassau.cli.main", "nassau.cli"), ("nassau", "nassau"),
                                            ("algebra.milnor.basis", "algebra.milnor"), ("gpu.rref", "gpu")])
def test_rooms_by_longest_prefix(name: str, expected: str) -> None:
    assert ORDER[room(name)] == expected
