"""Finitely presented modules M = G / A.R: generators and relations from a file (REFERENCE-MODULES 1).

G is the free module on the generators (in degree order, then file order), R the free module with one
generator per relation and phi: R -> G sends each to its relation. In degree d the image I_d of phi is
row-reduced; the basis of M_d is the set of G_d basis elements whose columns are not pivots, in G order
(the reference's order, a wire format). Reducing modulo the RREF sends a pivot column to its row, so the
quotient G_d -> M_d is one matrix Q_d, and the action of all of A_e on M_i is one batched product matrix
(the lifts of M_i's basis, multiplied by A_e in G) times Q_{i+e}. Degrees are computed only when asked
for, so the module is as infinite as the relations make it.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import numpy as np

from algebra.free.free_map import FreeMap
from algebra.free.free_module import FreeModule
from algebra.milnor.adem import adem_to_milnor, parse_adem
from algebra.milnor.basis import MilnorBasis, format_element, parse_element
from algebra.milnor.ppart import degree
from algebra.milnor.profile import Profile, a_n
from algebra.module.finite import FDModule
from algebra.module.interface import LazyTables
from algebra.module.spec import ModuleError, ModuleSpec
from fp import from_bool, gather_columns, gf2_matmul, row_reduce, to_bool, words

FP_TYPE = "finitely presented module"
_P_ST = re.compile(r"^P\^(\d+)_(\d+)$")


@dataclass
class _Degree:
    """M_d: the surviving columns of G_d and the quotient matrix Q_d (dim G_d x dim M_d, packed)."""

    survivors: np.ndarray
    quotient: np.ndarray


class FinitelyPresentedModule:
    def __init__(self, name: str, profile: Profile, gens: list[tuple[str, int]],
                 relations: list[tuple[int, np.ndarray]], source: str) -> None:
        """gens: (name, degree) in degree order; relations: (degree, packed vector over G in that degree)."""
        self.name = name
        self.profile = profile
        self.algebra = MilnorBasis(profile)
        self.source = source
        self.free = FreeModule(self.algebra, name="G")
        for gen_name, deg in gens:
            self.free.add_generators(deg, [gen_name])
        rel_module = FreeModule(self.algebra, name="R")
        self.relations = FreeMap(rel_module, self.free)
        for deg, vector in sorted(relations, key=lambda r: r[0]):
            rel_module.add_generators(deg, [f"r{rel_module.num_gens}"])
            self.relations.add_outputs(deg, vector[None, :], self.free.num_gens)
        self._min = min(d for _, d in gens)
        #: A(n) when M = A//A(n) = A (x)_{A(n)} F2 (one generator, relations exactly Sq1, ..., Sq(2^n)): then
        #: Ext_A(M) = Ext_{A(n)}(F2), far cheaper to compute (see over_subalgebra).
        self.subalgebra = _quotient_subalgebra(profile, gens, relations)
        self._lock = threading.Lock()
        self._degrees: dict[int, _Degree] = {}
        self._lifts: dict[int, FreeMap] = {}
        self.action_table = LazyTables(self._table, self.dimension)

    @property
    def min_degree(self) -> int:
        return self._min

    @property
    def max_degree(self) -> int | None:
        return None

    def _degree(self, d: int) -> _Degree:
        with self._lock:
            found = self._degrees.get(d)
        if found is not None:
            return found
        ncols = self.free.dimension(d)
        image = self.relations.matrix(d) if d >= self._min else np.zeros((0, words(ncols)), dtype=np.uint64)
        pivots = row_reduce(image, ncols)
        survivors = np.setdiff1d(np.arange(ncols, dtype=np.int64), pivots)
        quotient = np.zeros((ncols, words(len(survivors))), dtype=np.uint64)
        quotient[survivors] = from_bool(np.eye(len(survivors), dtype=bool))
        quotient[pivots] = gather_columns(image[: len(pivots)], survivors)
        found = _Degree(survivors, quotient)
        with self._lock:
            return self._degrees.setdefault(d, found)

    def dimension(self, d: int) -> int:
        return len(self._degree(d).survivors) if d >= self._min else 0

    def basis_name(self, d: int, i: int) -> str:
        column = int(self._degree(d).survivors[i])
        off = self.free.offsets(d)
        g = int(np.searchsorted(off, column, side="right") - 1)
        r = self.algebra.element(d - int(self.free.gen_degrees[g]), column - int(off[g]))
        gen = self.free.gen_names[g]
        return gen if not r else f"{format_element(r)} {gen}"

    def _lift(self, d: int) -> FreeMap:
        """A free module with one generator per basis element of M_d, mapped to its lift in G_d."""
        with self._lock:
            found = self._lifts.get(d)
        if found is not None:
            return found
        survivors = self._degree(d).survivors
        ncols = self.free.dimension(d)
        source = FreeModule(self.algebra, name=f"M_{d}")
        lift = FreeMap(source, self.free)
        if len(survivors):
            source.add_generators(d, [f"m{k}" for k in range(len(survivors))])
            units = np.zeros((len(survivors), ncols), dtype=bool)
            units[np.arange(len(survivors)), survivors] = True
            lift.add_outputs(d, from_bool(units).reshape(len(survivors), words(ncols)), self.free.num_gens)
        with self._lock:
            return self._lifts.setdefault(d, lift)

    def over_subalgebra(self) -> FDModule:
        """F2 over self.subalgebra, in the generator's degree (the change of rings)."""
        if self.subalgebra is None:
            raise ValueError(f"{self.name} is not A//B for a sub-Hopf algebra B")
        gen, deg = self.free.gen_names[0], int(self.free.gen_degrees[0])
        return FDModule(name=self.name, profile=self.subalgebra, algebra=MilnorBasis(self.subalgebra),
                        names={deg: [gen]}, source=self.source)

    def _table(self, op_deg: int, in_deg: int) -> np.ndarray | None:
        """All of A_op on M_in: the lifts of M_in's basis multiplied in G (one batch), then reduced by Q."""
        din, dout, dop = self.dimension(in_deg), self.dimension(in_deg + op_deg), self.algebra.dimension(op_deg)
        if not (din and dout and dop):
            return None
        products = self._lift(in_deg).matrix(in_deg + op_deg)  # rows: m_k-major, then P in A_op
        acted = gf2_matmul(products, self._degree(in_deg + op_deg).quotient, self.free.dimension(in_deg + op_deg),
                           dout)
        return np.ascontiguousarray(to_bool(acted, dout).reshape(din, dop, dout).transpose(1, 0, 2), dtype=np.uint8)


def _quotient_subalgebra(profile: Profile, gens: list[tuple[str, int]],
                         relations: list[tuple[int, np.ndarray]]) -> Profile | None:
    """A(n) if the presentation is exactly A//A(n) over the whole algebra, else None."""
    if not profile.is_full or len(gens) != 1:
        return None
    base = gens[0][1]
    exponents = set()
    for deg, vector in relations:
        e = deg - base
        # In one generator's block of degree e, P(e) = Sq^e is basis element 0: the relation is Sq^e x alone.
        if e & (e - 1) or vector[0] != 1 or vector[1:].any():
            return None
        exponents.add(e.bit_length() - 1)
    n = len(exponents) - 1
    return a_n(n) if exponents == set(range(n + 1)) and len(relations) == n + 1 else None


def fp_module(spec: ModuleSpec, profile: Profile, shift: int) -> FinitelyPresentedModule:
    """A "finitely presented module" file; relations from `milnor_relations`, or `adem_relations` for @adem."""
    data, where = spec.data, str(spec.path)
    raw = data.get("gens")
    if not isinstance(raw, dict) or not raw:
        raise ModuleError(f"{where}: 'gens' must be a nonempty object of name: degree")
    for gen_name, deg in raw.items():
        if isinstance(deg, bool) or not isinstance(deg, int):
            raise ModuleError(f"{where}: degree of {gen_name} must be an integer, got {deg!r}")
    gens = sorted(((n, d + shift) for n, d in raw.items()), key=lambda g: g[1])
    key = f"{spec.basis}_relations"
    lines = data.get(key)
    if lines is None:
        other = [k for k in ("milnor_relations", "adem_relations") if k in data]
        hint = f" (it has {other[0]}: ask for {spec.name}@{other[0].split('_')[0]})" if other else ""
        raise ModuleError(f"{where}: a finitely presented module needs '{key}' for the {spec.basis} basis{hint}")
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise ModuleError(f"{where}: '{key}' must be a list of strings")
    algebra = MilnorBasis(profile)
    free = FreeModule(algebra, name="G")
    for gen_name, deg in gens:
        free.add_generators(deg, [gen_name])
    relations = [_relation(line, spec.basis, algebra, free, where) for line in lines]
    return FinitelyPresentedModule(spec.display, profile, gens, [r for r in relations if r is not None], where)


def _operation(text: str, basis: str, algebra: MilnorBasis) -> tuple[int, list[tuple[int, ...]]]:
    """The degree of the operation `text`, written in the given basis, and the Milnor elements it sums to."""
    if basis == "adem":
        factors = parse_adem(text)
        return sum(factors), adem_to_milnor(algebra, factors)
    m = _P_ST.match(text)
    r = parse_element(text) if m is None else tuple([0] * (int(m.group(2)) - 1) + [1 << int(m.group(1))])
    return degree(r), [r]


def _relation(line: str, basis: str, algebra: MilnorBasis, free: FreeModule, where: str) -> tuple[int, np.ndarray] | None:
    """A relation as (degree, packed vector over G in that degree); None if it is zero."""
    index = {name: k for k, name in enumerate(free.gen_names)}
    terms: list[tuple[tuple[int, ...], int]] = []
    rel_degree = None
    for term in (t.strip() for t in line.split(" + ")):
        op_text, _, gen = term.rpartition(" ")
        if gen not in index:
            raise ModuleError(f"{where}: relation {line!r} names unknown generator {gen!r}")
        try:
            op_degree, ops = _operation(op_text.strip() or "1", basis, algebra)
        except ValueError as exc:
            raise ModuleError(f"{where}: relation {line!r}: {exc}") from None
        deg = op_degree + int(free.gen_degrees[index[gen]])
        if rel_degree is None:
            rel_degree = deg
        elif deg != rel_degree:
            raise ModuleError(f"{where}: relation {line!r} has inconsistent degree: expected {rel_degree} but "
                              f"{term!r} has degree {deg}")
        for r in ops:
            if not algebra.profile.contains(r):
                raise ModuleError(f"{where}: relation {line!r}: {format_element(r)} is not in "
                                  f"{algebra.profile.describe()}")
            terms.append((r, index[gen]))
    ncols = free.dimension(rel_degree)
    bits = np.zeros(ncols, dtype=bool)
    off = free.offsets(rel_degree)
    for r, g in terms:
        bits[off[g] + algebra.index(r)] ^= True
    if not bits.any():
        return None
    return rel_degree, from_bool(bits[None, :])[0]
