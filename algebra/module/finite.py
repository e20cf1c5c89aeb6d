"""Finite-dimensional modules over A_p (or a profile subalgebra) from sseq's JSON format, at any prime.

A file gives the action of algebra generators only (Sq^(2^k) at p = 2; beta and P^(p^k) at odd p). The
action of every Milnor basis element is derived degree by degree: the products g * b (g a generator, b a
basis element of lower degree) span the algebra in degree e, so each basis element is a combination of them
and acts by the same combination of g (b x). Any linear relation among those products must act as zero;
checking all of them is checking that the data define a module (the Adem relations), and a failure names
the relation and the element. Tables hold entries mod p.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from algebra.milnor.basis import MilnorBasis, format_sq
from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.products import multiply
from algebra.milnor.profile import Profile
from algebra.module.interface import act, identity_table
from algebra.module.spec import ModuleError, ModuleSpec


@dataclass
class FDModule:
    name: str
    profile: Profile
    algebra: MilnorBasis | OddMilnorBasis
    names: dict[int, list[str]]
    #: (op degree, input degree) -> uint8 array (dim B_op, dim M_in, dim M_out), entries mod p.
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
        """See algebra.module.interface.Module: every table was derived when the file was read."""
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
        """An algebra basis element applied to a vector (entries mod p) in degree in_deg."""
        return act(self, r, in_deg, vector)


def fd_module(spec: ModuleSpec, profile: Profile, shift: int) -> FDModule:
    """A "finite dimensional module" file (the loader has checked p, type and profile)."""
    data, where = spec.data, str(spec.path)
    p = data["p"]
    algebra = MilnorBasis(profile) if p == 2 else OddMilnorBasis(p, profile)
    gens = data.get("gens")
    if not isinstance(gens, dict):
        raise ModuleError(f"{where}: 'gens' must be an object of name: degree")
    names: dict[int, list[str]] = {}
    position: dict[str, tuple[int, int]] = {}
    for name, deg in gens.items():
        d = _int(deg, where, f"degree of {name}") + shift
        names.setdefault(d, []).append(name)
        position[name] = (d, len(names[d]) - 1)
    module = FDModule(name=spec.display, profile=profile, algebra=algebra, names=names,
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


def _label(algebra: MilnorBasis | OddMilnorBasis, elem: object) -> str:
    """How users write an operation: Sq4 / P(0, 1) at p = 2, b / P1 / Q_1 P(3) at odd p."""
    return format_sq(elem) if algebra.prime == 2 else algebra.format(elem)


def _parse_actions(lines: list, module: FDModule, position: dict[str, tuple[int, int]],
                   where: str) -> dict[tuple[object, int], np.ndarray]:
    """Generator actions from the file: (op, input degree) -> matrix (dim_in x dim_out, entries mod p)."""
    alg = module.algebra
    p = alg.prime
    given: dict[tuple[object, int], np.ndarray] = {}
    for line in lines:
        if not isinstance(line, str) or "=" not in line:
            raise ModuleError(f"{where}: cannot read action {line!r} (expected 'Sq2 x0 = x2')")
        lhs, rhs = (part.strip() for part in line.split("=", 1))
        op_text, _, gen = lhs.rpartition(" ")
        if not op_text.strip() or not gen:
            raise ModuleError(f"{where}: cannot read the left side of action {line!r} (expected 'OP GENERATOR')")
        try:
            op = alg.parse(op_text)
        except ValueError as exc:
            raise ModuleError(f"{where}: action {line!r}: {exc}") from None
        if gen not in position:
            raise ModuleError(f"{where}: action {line!r} names unknown generator {gen!r}")
        op_deg = alg.degree(op)
        if op not in alg.generators(op_deg):
            hint = "Sq1, Sq2, Sq4, ..." if p == 2 else f"b, P1, P{p}, ..."
            raise ModuleError(f"{where}: action {line!r}: {op_text.strip()} is not a generator of "
                              f"{module.profile.describe()}; give actions of {hint} only")
        in_deg, in_idx = position[gen]
        out_deg = in_deg + op_deg
        key = (op, in_deg)
        if key not in given:
            given[key] = np.zeros((module.dimension(in_deg), module.dimension(out_deg)), dtype=np.int64)
        if rhs == "0":
            continue
        for term in rhs.split("+"):
            words = term.split()
            coeff = 1
            if len(words) == 2 and words[0].lstrip("-").isdigit():
                coeff, words = int(words[0]), words[1:]
                if not 0 <= coeff < p:
                    raise ModuleError(f"{where}: action {line!r}: coefficient {coeff} is not in 0..{p - 1} "
                                      f"(p = {p})")
            if len(words) != 1:
                raise ModuleError(f"{where}: cannot read term {term.strip()!r} of action {line!r}")
            target = words[0]
            if target not in position:
                raise ModuleError(f"{where}: action {line!r} names unknown generator {target!r}")
            t_deg, t_idx = position[target]
            if t_deg != out_deg:
                raise ModuleError(f"{where}: degree mismatch in action {line!r}: {op_text.strip()} {gen} has "
                                  f"degree {out_deg} but {target} has degree {t_deg}")
            given[key][in_idx, t_idx] = (given[key][in_idx, t_idx] + coeff) % p
    return given


class _Span:
    """Incremental row echelon form mod p of the spanning products, remembering each row as a combination."""

    def __init__(self, p: int, count: int) -> None:
        self.p = p
        self.count = count
        self.rows: list[tuple[int, np.ndarray, np.ndarray]] = []  # (pivot, vector with pivot 1, combination)

    def reduce(self, v: np.ndarray, combo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        for piv, row, row_combo in self.rows:
            f = v[piv]
            if f:
                v = (v - f * row) % self.p
                combo = (combo - f * row_combo) % self.p
        return v, combo

    def add(self, v: np.ndarray, combo: np.ndarray) -> np.ndarray | None:
        """Add a vector; if it depends on the others, return the combination of products that vanishes."""
        v, combo = self.reduce(v, combo)
        nonzero = np.nonzero(v)[0]
        if len(nonzero) == 0:
            return combo
        piv = int(nonzero[0])
        inv = pow(int(v[piv]), self.p - 2, self.p)
        self.rows.append((piv, v * inv % self.p, combo * inv % self.p))
        self.rows.sort(key=lambda r: r[0])
        return None


def _extend_actions(module: FDModule, given: dict, where: str) -> None:
    """Derive the action of every basis element and check every relation among the spanning products."""
    lo, hi = module.min_degree, module.max_degree
    alg = module.algebra
    p = alg.prime
    alg.extend(max(hi - lo, 0))
    gens = sorted({g for k in range(1, hi - lo + 1) for g in alg.generators(k)}, key=alg.degree)
    for e in range(1, hi - lo + 1):
        dim_e = alg.dimension(e)
        if dim_e == 0:
            continue
        labels: list[str] = []
        acts: list[dict[int, np.ndarray]] = []
        vectors: list[np.ndarray] = []
        for gen in gens:
            g_deg = alg.degree(gen)
            if g_deg > e:
                continue
            for b_idx in range(alg.dimension(e - g_deg)):
                b = alg.element(e - g_deg, b_idx)
                vectors.append(multiply(alg, gen, b))
                labels.append(_label(alg, gen) + ("" if g_deg == e else " " + _label(alg, b)))
                per_deg = {}
                for i in range(lo, hi - e + 1):
                    b_mat = module.action_matrix(e - g_deg, b_idx, i).astype(np.int64)
                    g_mat = given.get((gen, i + e - g_deg))
                    if g_mat is None:
                        g_mat = np.zeros((module.dimension(i + e - g_deg), module.dimension(i + e)), dtype=np.int64)
                    per_deg[i] = (b_mat @ g_mat) % p
                acts.append(per_deg)
        span = _Span(p, len(vectors))
        for k, v in enumerate(vectors):
            unit = np.zeros(len(vectors), dtype=np.int64)
            unit[k] = 1
            relation = span.add(v.astype(np.int64) % p, unit)
            if relation is None:
                continue
            for i in range(lo, hi - e + 1):
                total = _combine(acts, relation, i, p)
                bad = np.nonzero(total.any(axis=1))[0]
                if len(bad):
                    rel = " + ".join(("" if c == 1 else f"{c} ") + labels[j]
                                     for j, c in enumerate(relation) if c)
                    raise ModuleError(f"{where}: the actions violate the relation {rel} = 0 "
                                      f"(it acts nonzero on {module.names[i][bad[0]]})")
        for idx in range(dim_e):
            unit = np.zeros(dim_e, dtype=np.int64)
            unit[idx] = 1
            rest, combo = span.reduce(unit, np.zeros(len(vectors), dtype=np.int64))
            if rest.any():
                raise ModuleError(f"{where}: cannot derive the action of {_label(alg, alg.element(e, idx))}: "
                                  f"it is not generated by the given operations in {module.profile.describe()}")
            # unit - combo . V = rest = 0, so the basis element is -combo . V.
            for i in range(lo, hi - e + 1):
                if module.dimension(i) == 0 or module.dimension(i + e) == 0:
                    continue
                table = module.actions.setdefault(
                    (e, i), np.zeros((dim_e, module.dimension(i), module.dimension(i + e)), dtype=np.uint8))
                table[idx] = _combine(acts, (-combo) % p, i, p)


def _combine(acts: list[dict[int, np.ndarray]], combo: np.ndarray, i: int, p: int) -> np.ndarray:
    """sum_k combo[k] acts[k][i] mod p."""
    total = None
    for k in np.nonzero(combo)[0]:
        term = combo[k] * acts[k][i]
        total = term if total is None else total + term
    if total is None:
        return np.zeros_like(acts[0][i]).astype(np.uint8)
    return (total % p).astype(np.uint8)
