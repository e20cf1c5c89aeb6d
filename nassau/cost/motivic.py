"""What a C-motivic run costs before it runs: the model of nassau.cost.estimate over the region its engine resolves,
with generators from a probe of its own and the constants of a calibration of that engine.

A free A^C-module is free over F_2[tau] on the classical Milnor basis, so a motivic job's matrices have the sizes of
the classical ones of a resolution with the motivic generators; and in every (s, t) those generators are the
A^C/tau-resolution's of M/tau (F/tau is a minimal A^C/tau-resolution of M/tau, F being tau-free), which the
tau-quotient engine finds in a second on the stem-shaped region. So the probe is that run, through PROBE_STEM stems
and every row to PROBE_STEM + 2 (the h_0 and h_1 towers reach s = n), and beyond it the generators follow the motivic
sphere's curve (SPHERE_C) scaled to it (nassau.cost.generators). The sphere over A^C resolves the rectangle t <= T
(motivic_region), C(tau) the stem-shaped region; each engine is calibrated on its own
(nassau.cost.calibration.CALIBRATIONS).
"""
from __future__ import annotations

from algebra.module.motivic import MotivicModule
from algebra.module.spec import ModuleSpec
from nassau.cost import calibration
from nassau.cost.estimate import Estimate, estimate
from nassau.cost.generators import GeneratorModel, Sphere
from nassau.engine.region import Region
from nassau.engine.tau_quotient import resolve_quotient

#: The probe's stems above the module's bottom (C(tau) through stem 40, every row: about a second).
PROBE_STEM = 40
#: The generators of the sphere's resolution over A^C (C(tau)'s, the same) through stem n, s <= 60, the tower at
#: stem 0 aside: our run of C(tau) through stem 100, s <= 60 (21599 generators; the cumulative count grows as n^3.8
#: over stems 80-100). A power fitted to the probe (through stem 40) put C(tau) through stem 90, s <= 48 at 7565
#: generators of 13457.
SPHERE_C = Sphere({10: 30, 20: 141, 30: 402, 40: 938, 50: 1894, 60: 3515, 70: 6113, 80: 9745, 90: 14782,
                   100: 21599})


def probe(mod: MotivicModule, spec: ModuleSpec) -> GeneratorModel:
    """The generators of M^C's resolution over A^C (or of M/tau's over A^C/tau: the same), from the probe."""
    bottom = mod.module.min_degree
    where = Region(max_s=PROBE_STEM + 2, min_degree=bottom, max_stem=bottom + PROBE_STEM)
    quotient = MotivicModule(mod.module, mod.weights, True)
    return calibration.kept_probe(spec, "motivic", where, lambda: resolve_quotient(quotient, where), SPHERE_C)


def motivic_estimate(mod: MotivicModule, spec: ModuleSpec, whole: Region, algorithm: str, threads: int = 1,
                     processes: bool = False, timed: bool = True, saving: bool = False) -> Estimate:
    """The cost of resolving `whole` (what the run resolves: nassau.api.motivic.resolved_whole) by the motivic
    engine named by `algorithm` (its save directories' name), on `threads` workers."""
    return estimate(mod.module, spec, whole, algorithm, threads, processes, timed=timed, generators=probe(mod, spec),
                    saving=saving)
