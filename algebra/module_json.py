"""Finding and reading module definitions in sseq's JSON format (REFERENCE 2.1).

A module is named the way the reference names it: a path to a JSON file, or NAME, looked up as
`NAME.json` in the working directory, then `steenrod_modules/NAME.json` there, then among the
definitions bundled with this package. `NAME[k]` suspends by k; `@milnor` may follow.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path


class ModuleError(ValueError):
    """A module cannot be found, read or used; the message names the file and the problem."""


@dataclass(frozen=True)
class ModuleSpec:
    name: str
    shift: int
    path: Path
    data: dict
    #: The basis the name asked for with @adem / @milnor: it picks a finitely presented module's relation
    #: list. The engine itself always works in the Milnor basis.
    basis: str = "milnor"

    @property
    def display(self) -> str:
        return self.name if self.shift == 0 else f"{self.name}[{self.shift}]"


_SPEC = re.compile(r"^(?P<name>.+?)(?:\[(?P<shift>[+-]?\d+)\])?(?:@(?P<basis>\w+))?$")


def bundled_dir() -> Path:
    return Path(str(resources.files("algebra") / "modules"))


def find_module_file(name: str, cwd: Path | None = None) -> Path:
    cwd = Path.cwd() if cwd is None else cwd
    direct = Path(name)
    if name.endswith(".json") or "/" in name:
        if direct.is_file():
            return direct
        raise ModuleError(f"module file {name} does not exist")
    for candidate in (cwd / f"{name}.json", cwd / "steenrod_modules" / f"{name}.json", bundled_dir() / f"{name}.json"):
        if candidate.is_file():
            return candidate
    known = ", ".join(sorted(p.stem for p in bundled_dir().glob("*.json")))
    raise ModuleError(f"unknown module {name!r}: no {name}.json in the working directory, in steenrod_modules/, "
                      f"or among the bundled modules ({known})")


def read_spec(spec: str, cwd: Path | None = None) -> ModuleSpec:
    """Resolve `NAME[shift]@basis` (or a path) to its file and parsed JSON."""
    m = _SPEC.match(spec.strip())
    if not m or not m.group("name"):
        raise ModuleError(f"cannot read module name {spec!r} (expected NAME, NAME[shift] or a .json path)")
    basis = m.group("basis") or "milnor"
    if basis not in ("milnor", "adem"):
        raise ModuleError(f"{spec}: unknown basis @{basis} (use @milnor or @adem)")
    path = find_module_file(m.group("name"), cwd)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ModuleError(f"{path}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModuleError(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise ModuleError(f"{path}: expected a JSON object at the top level")
    shift = int(m.group("shift") or 0)
    name = Path(m.group("name")).stem if m.group("name").endswith(".json") else m.group("name")
    return ModuleSpec(name=name, shift=shift, path=path, data=data, basis=basis)
