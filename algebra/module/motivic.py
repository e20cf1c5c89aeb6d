"""A finite module over the C-motivic Steenrod algebra A^C: a classical finite module with a weight on each basis
element (docs/motivic.md).

M^C = F_2[tau] on M's basis, P(R) x = sum tau^{w(R) + w(x) - w(y)} y over the classical terms y of P(R) x. That
is an A^C-module exactly when no such power is negative (associativity is the classical one, since tau is no zero
divisor), which `weights_checked` demands of every Milnor basis element. Weights come from the file's `"weights"`
field (name: weight, beside `"gens"`), or else from the usual lift of a cell complex: each connected piece's lowest
cell has weight 0 and Sq^(2^k) adds the weight of Sq^(2^k) (2^{k-1}, Sq1 0), so C2, Ceta, Cnu, Csigma have cells
(0, 0) and (1, 0), (2, 1), (4, 2), (8, 4). `"tau_quotient": true` (or the name `Ctau`, the sphere's) asks for
Ext with coefficients in M_2/tau instead: Ext_{A^C}(M, M_2/tau), the Ext of M smash C(tau).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algebra.milnor.motivic_weight import degree_weights
from algebra.module.finite import FDModule
from algebra.module.loader import FD_TYPE, module_from_spec
from algebra.module.spec import ModuleError, ModuleSpec, read_spec

#: The cofiber of tau: the sphere with coefficients in M_2/tau.
CTAU = "Ctau"


@dataclass
class MotivicModule:
    module: FDModule
    #: degree -> the weight of each basis element there.
    weights: dict[int, np.ndarray]
    #: Ext with coefficients in M_2/tau (Ext of M smash C(tau)) rather than M_2.
    tau_quotient: bool = False

    @property
    def name(self) -> str:
        return f"{self.module.name}/tau" if self.tau_quotient and self.module.name != CTAU else self.module.name

    def weight(self, d: int) -> np.ndarray:
        return self.weights.get(d, np.zeros(0, dtype=np.int64))


def load_motivic(name: str) -> MotivicModule:
    """A module by name (as `load_module`), with its weights; ModuleError (one line) where it has no motivic
    lift here: not finite, not at p = 2, over a subalgebra, or weights that make an action inhomogeneous."""
    quotient = name == CTAU
    return motivic_from_spec(read_spec("S_2") if quotient else read_spec(name), quotient)


def motivic_from_spec(spec: ModuleSpec, ctau: bool = False) -> MotivicModule:
    """The motivic module of a definition (load_motivic's, or the one a save directory keeps, which a cluster worker
    reads); ctau: it is the sphere's, read as Ctau (a save directory of Ctau keeps S_2's definition named Ctau)."""
    quotient = ctau or spec.name == CTAU
    data, where = spec.data, str(spec.path)
    if data.get("type") != FD_TYPE or data.get("p") != 2 or data.get("profile") is not None:
        raise ModuleError(f"{where}: motivic runs take finite modules over the whole algebra at p = 2 only")
    module = module_from_spec(spec)
    if quotient:
        module.name = CTAU
    flag = data.get("tau_quotient", False)
    if not isinstance(flag, bool):
        raise ModuleError(f"{where}: 'tau_quotient' must be true or false, got {flag!r}")
    given = data.get("weights")
    weights = _given_weights(module, given, where) if given is not None else _usual_weights(module, where)
    return MotivicModule(module, weights_checked(module, weights, where), quotient or flag)


def _given_weights(module: FDModule, given: object, where: str) -> dict[int, np.ndarray]:
    if not isinstance(given, dict):
        raise ModuleError(f"{where}: 'weights' must be an object of name: weight, beside 'gens'")
    out = {}
    for d, names in module.names.items():
        missing = [n for n in names if n not in given]
        if missing:
            raise ModuleError(f"{where}: 'weights' gives no weight for {missing[0]}")
        bad = [n for n in names if isinstance(given[n], bool) or not isinstance(given[n], int)]
        if bad:
            raise ModuleError(f"{where}: the weight of {bad[0]} must be an integer, got {given[bad[0]]!r}")
        out[d] = np.array([given[n] for n in names], dtype=np.int64)
    return out


def _usual_weights(module: FDModule, where: str) -> dict[int, np.ndarray]:
    """Weights forced by the generators' actions, each connected piece's lowest cell at weight 0."""
    alg = module.algebra
    cells = [(d, i) for d in sorted(module.names) for i in range(module.dimension(d))]
    weight: dict[tuple[int, int], int] = {}
    edges: dict[tuple[int, int], list[tuple[tuple[int, int], int]]] = {c: [] for c in cells}
    span = module.max_degree - module.min_degree
    for k in range(span.bit_length()):
        op = 1 << k
        w_op = 0 if k == 0 else 1 << (k - 1)
        index = alg.index((op,))
        for d in module.names:
            table = module.action_table(op, d)
            if table is None:
                continue
            for i, o in zip(*np.nonzero(table[index])):
                edges[(d, int(i))].append(((d + op, int(o)), w_op))
                edges[(d + op, int(o))].append(((d, int(i)), -w_op))
    for start in cells:
        if start in weight:
            continue
        weight[start] = 0
        todo = [start]
        while todo:
            cell = todo.pop()
            for other, step in edges[cell]:
                w = weight[cell] + step
                if other not in weight:
                    weight[other] = w
                    todo.append(other)
                elif weight[other] != w:
                    name = module.basis_name(*other)
                    raise ModuleError(f"{where}: the actions give {name} two weights ({weight[other]} and {w}); "
                                      "give a 'weights' field")
    return {d: np.array([weight[(d, i)] for i in range(module.dimension(d))], dtype=np.int64)
            for d in module.names}


def weights_checked(module: FDModule, weights: dict[int, np.ndarray], where: str) -> dict[int, np.ndarray]:
    """The weights, once every P(R) x has terms y of weight at most w(R) + w(x) (tau^{w(R) + w(x) - w(y)} y);
    else ModuleError naming the first action that would need a negative power of tau."""
    alg = module.algebra
    for (op_deg, in_deg), table in sorted(module.actions.items()):
        w_op = degree_weights(alg, op_deg)
        w_in, w_out = weights[in_deg], weights[in_deg + op_deg]
        a, i, o = np.nonzero(table)
        bad = np.nonzero(w_out[o] > w_op[a] + w_in[i])[0]
        if len(bad):
            k = bad[0]
            op = alg.format(alg.element(op_deg, int(a[k])))
            x, y = module.basis_name(in_deg, int(i[k])), module.basis_name(in_deg + op_deg, int(o[k]))
            raise ModuleError(f"{where}: the weights do not make the action homogeneous: {op} {x} has the term {y} "
                              f"of weight {int(w_out[o[k]])}, above {int(w_op[a[k]])} + {int(w_in[i[k]])}")
    return weights
