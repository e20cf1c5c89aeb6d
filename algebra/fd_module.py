"""Finite-dimensional modules over A (or a profile subalgebra) from sseq's JSON format.

A file gives the action of algebra generators only (Sq^(2^k)). The action of every Milnor basis
element is derived degree by degree: the products g * b (g a generator, b a basis element of lower
degree) span the algebra in degree e, so P(R) = sum of some of them and P(R) x = sum g (b x). Any linear
relation among those products must act as zero; checking all of them is checking that the data
define a module (the Adem relations), and a failure names the relation and the element.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from algebra.milnor_basis import MilnorBasis, format_sq, parse_element
from algebra.module import act, identity_table
from algebra.module_json import ModuleError, ModuleSpec
from algebra.ppart import degree
from algebra.products import multiply_one
from algebra.profile import Profile

@dataclass
class FDModule:
    name: str
    profile: Profile
    algebra: MilnorBasis
    names: dict[int, list[str]]
    #: (op degree, input degree) -> uint8 array (dim B_op, dim M_in, dim M_out).
    actions: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    cofiber: dict | None = None
    source: str = ""

    @property
    def min_degree(self) -> int:
        return min(self.names) if self.names else 0

    @property
    def max_degree(self) -> int:
        return max(self.names) if self.names else 0

    def dimension(self, d: int) -> int:
        return len(self.names.get(d, ()))

    @property
    def cells(self) -> list[int]:
        """Degrees of the basis elements, with multiplicity (one per cell)."""
        return [d for d in sorted(self.names) for _ in self.names[d]]

    def basis_name(self, d: int, i: int) -> str:
        return self.names[d][i]

    def action_table(self, op_deg: int, in_deg: int) -> np.ndarray | None:
        """See algebra.module.Module: every table was derived when the file was read."""
        if op_deg == 0:
            return identity_table(self.dimension(in_deg))
        return self.actions.get((op_deg, in_deg))

    def action_matrix(self, op_deg: int, op_index: int, in_deg: int) -> np.ndarray:
        """The matrix (dim M_in x dim M_out) of the op_index-th basis element of degree op_deg."""
        table = self.action_table(op_deg, in_deg)
        if table is None:
            return np.zeros((self.dimension(in_deg), self.dimension(in_deg + op_deg)), dtype=np.uint8)
        return table[op_index]

    def act(self, r: tuple[int, ...], in_deg: int, vector: np.ndarray) -> np.ndarray:
        """P(R) applied to a 0/1 vector in degree in_deg."""
        return act(self, r, in_deg, vector)


def fd_module(spec: ModuleSpec, profile: Profile, shift: int) -> FDModule:
    """A "finite dimensional module" file (the loader has checked p, type and profile)."""
    data, where = spec.data, str(spec.path)
    gens = data.get("gens")
    if not isinstance(gens, dict):
        raise ModuleError(f"{where}: 'gens' must be an object of name: degree")
    names: dict[int, list[str]] = {}
    position: dict[str, tuple[int, int]] = {}
    for name, deg in gens.items():
        d = _int(deg, where, f"degree of {name}") + shift
        names.setdefault(d, []).append(name)
        position[name] = (d, len(names[d]) - 1)
    module = FDModule(name=spec.display, profile=profile, algebra=MilnorBasis(profile), names=names,
                      cofiber=data.get("cofiber"), source=where)
    actions = data.get("actions", [])
    if not isinstance(actions, list):
        raise ModuleError(f"{where}: 'actions' must be a list of strings")
    given = _parse_actions(actions, module, position, where)
    _extend_actions(module, given, where)
    return module


def _int(value: object, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModuleError(f"{where}: {what} must be an integer, got {value!r}")
    return value


def _parse_actions(lines: list, module: FDModule, position: dict[str, tuple[int, int]],
                   where: str) -> dict[tuple[tuple[int, ...], int], np.ndarray]:
    """Generator actions from the file: (op, input degree) -> matrix (dim_in x dim_out)."""
    given: dict[tuple[tuple[int, ...], int], np.ndarray] = {}
    for line in lines:
        if not isinstance(line, str) or "=" not in line:
            raise ModuleError(f"{where}: cannot read action {line!r} (expected 'Sq2 x0 = x2')")
        lhs, rhs = (part.strip() for part in line.split("=", 1))
        parts = lhs.split()
        if len(parts) != 2:
            raise ModuleError(f"{where}: cannot read the left side of action {line!r} (expected 'OP GENERATOR')")
        try:
            op = parse_element(parts[0])
        except ValueError as exc:
            raise ModuleError(f"{where}: action {line!r}: {exc}") from None
        if parts[1] not in position:
            raise ModuleError(f"{where}: action {line!r} names unknown generator {parts[1]!r}")
        op_deg = degree(op)
        if op not in module.profile.generators(op_deg):
            raise ModuleError(f"{where}: action {line!r}: {parts[0]} is not a generator of "
                              f"{module.profile.describe()}; give actions of Sq1, Sq2, Sq4, ... only")
        in_deg, in_idx = position[parts[1]]
        out_deg = in_deg + op_deg
        key = (op, in_deg)
        if key not in given:
            given[key] = np.zeros((module.dimension(in_deg), module.dimension(out_deg)), dtype=np.uint8)
        row = np.zeros(module.dimension(out_deg), dtype=np.uint8)
        if rhs != "0":
            for term in rhs.split("+"):
                words = term.split()
                coeff = 1
                if len(words) == 2 and words[0].lstrip("-").isdigit():
                    coeff, words = int(words[0]), words[1:]
                if len(words) != 1:
                    raise ModuleError(f"{where}: cannot read term {term.strip()!r} of action {line!r}")
                target = words[0]
                if target not in position:
                    raise ModuleError(f"{where}: action {line!r} names unknown generator {target!r}")
                t_deg, t_idx = position[target]
                if t_deg != out_deg:
                    raise ModuleError(f"{where}: degree mismatch in action {line!r}: {parts[0]} {parts[1]} has "
                                      f"degree {out_deg} but {target} has degree {t_deg}")
                row[t_idx] ^= coeff & 1
        given[key][in_idx] = row
    return given


def _bits(vec: np.ndarray) -> int:
    """A packed uint64 vector as a Python int (bit i = entry i)."""
    return int.from_bytes(vec.astype("<u8").tobytes(), "little")


def _extend_actions(module: FDModule, given: dict, where: str) -> None:
    """Derive the action of every basis element and check every relation among the spanning products."""
    lo, hi = module.min_degree, module.max_degree
    alg = module.algebra
    alg.extend(max(hi - lo, 0))
    for e in range(1, hi - lo + 1):
        dim_e = alg.dimension(e)
        if dim_e == 0:
            continue
        # Spanning products g * b, each with its action on every input degree.
        labels: list[str] = []
        vectors: list[int] = []
        acts: list[dict[int, np.ndarray]] = []
        for gen in sorted({g for k in range(1, e + 1) for g in module.profile.generators(k)}, key=degree):
            g_deg = degree(gen)
            for b_idx in range(alg.dimension(e - g_deg)):
                b = alg.element(e - g_deg, b_idx)
                vectors.append(_bits(multiply_one(alg, gen, b)))
                labels.append(format_sq(gen) + ("" if not b else " " + format_sq(b)))
                per_deg = {}
                for i in range(lo, hi - e + 1):
                    b_mat = module.action_matrix(e - g_deg, b_idx, i).astype(np.int64)
                    g_mat = given.get((gen, i + e - g_deg))
                    if g_mat is None:
                        g_mat = np.zeros((module.dimension(i + e - g_deg), module.dimension(i + e)), dtype=np.uint8)
                    per_deg[i] = (b_mat @ g_mat.astype(np.int64)) % 2
                acts.append(per_deg)
        # Eliminate: pivot bit -> (vector, set of products as a bitmask).
        basis: dict[int, tuple[int, int]] = {}
        for k, v in enumerate(vectors):
            combo = 1 << k
            for piv, (bv, bc) in sorted(basis.items(), reverse=True):
                if (v >> piv) & 1:
                    v ^= bv
                    combo ^= bc
            if v:
                basis[v.bit_length() - 1] = (v, combo)
                continue
            for i in range(lo, hi - e + 1):
                total = _combine(acts, combo, i, module.dimension(i), module.dimension(i + e))
                bad = np.nonzero(total.any(axis=1))[0]
                if len(bad):
                    rel = " + ".join(labels[j] for j in range(len(labels)) if (combo >> j) & 1)
                    raise ModuleError(f"{where}: the actions violate the relation {rel} = 0 "
                                      f"(it acts nonzero on {module.names[i][bad[0]]})")
        for i in range(lo, hi - e + 1):
            if module.dimension(i) == 0 or module.dimension(i + e) == 0:
                continue
            table = np.zeros((dim_e, module.dimension(i), module.dimension(i + e)), dtype=np.uint8)
            for idx in range(dim_e):
                v, combo = 1 << idx, 0
                for piv, (bv, bc) in sorted(basis.items(), reverse=True):
                    if (v >> piv) & 1:
                        v ^= bv
                        combo ^= bc
                if v:
                    raise ModuleError(f"{where}: cannot derive the action of {format_sq(alg.element(e, idx))}: "
                                      f"it is not generated by the given operations in {module.profile.describe()}")
                table[idx] = _combine(acts, combo, i, module.dimension(i), module.dimension(i + e))
            module.actions[(e, i)] = table


def _combine(acts: list[dict[int, np.ndarray]], combo: int, i: int, din: int, dout: int) -> np.ndarray:
    total = np.zeros((din, dout), dtype=np.int64)
    k = 0
    while combo:
        if combo & 1:
            total ^= acts[k][i]
        combo >>= 1
        k += 1
    return total.astype(np.uint8)
