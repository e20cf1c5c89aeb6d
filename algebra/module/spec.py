"""Finding and reading module definitions in sseq's JSON format (REFERENCE 2.1).

A module is named the way the reference names it: a path to a JSON file, or NAME, looked up as
`NAME.json` in the working directory, then `steenrod_modules/NAME.json` there, then among the
definitions bundled with this package. `NAME[k]` suspends by k; `@milnor` may follow.
"""
from __future__ import annotations

import difflib
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
    return Path(str(resources.files("algebra.module") / "bundled"))


def find_module_file(name: str, cwd: Path | None = None) -> Path:
    cwd = Path.cwd() if cwd is None else cwd
    direct = Path(name)
    if name.endswith(".json") or "/" in name:
        if direct.is_file():
            return direct
        raise ModuleError(_not_a_file(name, direct))
    for candidate in (cwd / f"{name}.json", cwd / "steenrod_modules" / f"{name}.json", bundled_dir() / f"{name}.json"):
        if candidate.is_file():
            return candidate
    if (cwd / name).is_dir():
        raise ModuleError(_not_a_file(name, cwd / name))
    known = sorted(p.stem for p in bundled_dir().glob("*.json"))
    where = f"no {name}.json in the working directory, in steenrod_modules/, or among the bundled modules"
    lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(lower), n=1)
    if close:
        raise ModuleError(f"unknown module {name!r}: did you mean {lower[close[0]]}? ({where})")
    raise ModuleError(f"unknown module {name!r}: {where} ({', '.join(known)})")


def _not_a_file(name: str, path: Path) -> str:
    if path.is_dir():
        return f"{name} is a directory, not a module file (a save directory is drawn by `nassau chart {name}`)"
    return f"module file {name} does not exist"


TENSOR = "tensor product"


def read_spec(spec: str, cwd: Path | None = None) -> ModuleSpec:
    """Resolve `NAME[shift]@basis` (or a path) to its file and parsed JSON; `A^B^...` is the tensor product of
    the named modules, kept as a spec whose data embeds each factor's (so a save directory can rebuild it)."""
    if "^" in spec:
        return _tensor_spec([read_spec(part, cwd) for part in spec.split("^")])
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


def _tensor_spec(factors: list[ModuleSpec]) -> ModuleSpec:
    primes = [f.data.get("p") for f in factors]
    for f, p in zip(factors[1:], primes[1:], strict=True):
        if p != primes[0]:
            raise ModuleError(f"cannot tensor {factors[0].display} (p = {primes[0]}, {factors[0].path}) with "
                              f"{f.display} (p = {p}, {f.path}): the primes differ")
    data = {"p": primes[0], "type": TENSOR,
            "factors": [{"name": f.name, "shift": f.shift, "basis": f.basis, "path": str(f.path), "data": f.data}
                        for f in factors]}
    name = "^".join(f.display for f in factors)
    return ModuleSpec(name=name, shift=0, path=Path(name), data=data)


def factor_specs(spec: ModuleSpec) -> list[ModuleSpec]:
    """The factors of a tensor-product spec (see read_spec)."""
    try:
        return [ModuleSpec(name=f["name"], shift=int(f["shift"]), path=Path(f["path"]), data=f["data"],
                           basis=f.get("basis", "milnor")) for f in spec.data["factors"]]
    except (KeyError, TypeError, ValueError):
        raise ModuleError(f"{spec.path}: a tensor product needs a list of factors") from None
