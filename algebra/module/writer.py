"""A bounded module written as a "finite dimensional module" file, in the reference's `tensor` output format.

Compact JSON with keys p, type, gens, actions: `gens` lists the basis degree by degree in basis order;
`actions` lists only the nonzero actions of the algebra generators (Sq1, Sq2, Sq4, ...), looping over
input degree, then output degree, then generator, then input element, each right side in basis order.
"""
from __future__ import annotations

import json

import numpy as np

from algebra.milnor.basis import format_sq
from algebra.module.interface import Module
from algebra.module.spec import ModuleError


def fd_json(module: Module) -> str:
    if module.max_degree is None:
        raise ModuleError(f"{module.name} is infinite; only a bounded module can be written as a finite "
                          "dimensional module file")
    degrees = range(module.min_degree, module.max_degree + 1)
    names = {d: [module.basis_name(d, i) for i in range(module.dimension(d))] for d in degrees}
    gens = {name: d for d in degrees for name in names[d]}
    actions = []
    for d_in in degrees:
        for d_out in range(d_in + 1, module.max_degree + 1):
            if not names[d_in] or not names[d_out]:
                continue
            table = module.action_table(d_out - d_in, d_in)
            for op in module.profile.generators(d_out - d_in):
                if table is None:
                    continue
                matrix = table[module.algebra.index(op)]
                for i, row in enumerate(matrix):
                    if row.any():
                        rhs = " + ".join(names[d_out][k] for k in np.nonzero(row)[0])
                        actions.append(f"{format_sq(op)} {names[d_in][i]} = {rhs}")
    body = {"p": 2, "type": "finite dimensional module", "gens": gens, "actions": actions}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)
