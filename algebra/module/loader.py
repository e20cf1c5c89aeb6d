"""From a module name to a module of the right kind: the one place that reads `type`, `p`, `profile`, `shift`.

Every kind (finite dimensional, finitely presented, real projective space, and tensor products of
these, named `A^B`) is built here from sseq's JSON and returned behind the common interface of
algebra.module.interface.
"""
from __future__ import annotations

from algebra.milnor.profile import Profile
from algebra.module.finite import fd_module
from algebra.module.finitely_presented import FP_TYPE, fp_module
from algebra.module.interface import Module
from algebra.module.projective_space import RP_TYPE, rp_module
from algebra.module.spec import TENSOR, ModuleError, ModuleSpec, factor_specs, read_spec
from algebra.module.tensor import TensorModule

FD_TYPE = "finite dimensional module"
KINDS = {FD_TYPE: fd_module, FP_TYPE: fp_module, RP_TYPE: rp_module}


def load_module(spec: str) -> Module:
    """Find, read and check a module by name (see module_json.read_spec)."""
    return module_from_spec(read_spec(spec))


def module_from_spec(spec: ModuleSpec) -> Module:
    data, where = spec.data, str(spec.path)
    p = data.get("p")
    if isinstance(p, bool) or not isinstance(p, int) or not _is_prime(p):
        raise ModuleError(f"{where}: p = {p!r} is not a prime")
    if p > 251:
        raise ModuleError(f"{where}: p = {p} is too large (primes up to 251 are supported)")
    kind = data.get("type")
    build = KINDS.get(kind)
    if build is None:
        known = " or ".join(repr(k) for k in KINDS)
        raise ModuleError(f"{where}: module type {kind!r} is not supported yet (only {known})")
    if p != 2 and kind != FD_TYPE:
        raise ModuleError(f"{where}: at p = {p} only finite dimensional modules are supported (the reference's "
                          f"{kind}s are p = 2 only)")
    try:
        profile = Profile.from_json(data.get("profile"))
    except (TypeError, ValueError) as exc:
        raise ModuleError(f"{where}: malformed profile: {exc}") from None
    shift = data.get("shift", 0)
    if isinstance(shift, bool) or not isinstance(shift, int):
        raise ModuleError(f"{where}: shift must be an integer, got {shift!r}")
    return build(spec, profile, shift + spec.shift)


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % k for k in range(2, int(n**0.5) + 1))


def tensor_module(spec: ModuleSpec, profile: Profile, shift: int) -> Module:
    """`A^B^...`: the factors left to right, each built from the definition embedded in the spec."""
    if shift:
        raise ModuleError(f"{spec.path}: shift a factor of a tensor product instead (A[k]^B)")
    factors = [module_from_spec(f) for f in factor_specs(spec)]
    module = factors[0]
    for k, right in enumerate(factors[1:], start=2):
        module = TensorModule(module, right, "^".join(f.name for f in factors[:k]))
    return module


KINDS[TENSOR] = tensor_module
