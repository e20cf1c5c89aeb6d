"""Single-word bit primitives for the kernels: pext/pdep (the column moves in `masked`), ctz (walking the set
bits of a word, in `m4ri`) and popcount (counting carries, in the pair algebra's Z/4 products).

pext/pdep: on x86 with BMI2 single instructions (called through LLVM intrinsics); elsewhere a loop over the set
bits of the mask does the same. The choice is made once at import from the host CPU's features (numba compiles
for the host CPU too, and its cache is keyed by CPU). Both versions stay importable so tests compare them.
ctz and popcount are LLVM's portable cttz and ctpop intrinsics (one instruction where the CPU has one).
"""
from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@njit(cache=True, nogil=True)
def pext_soft(x, m):
    """The bits of x at the set positions of m, packed into the low bits (in order)."""
    res = _ZERO
    bb = _ONE
    while m:
        if x & m & (~m + _ONE):
            res |= bb
        bb <<= _ONE
        m &= m - _ONE
    return res


@njit(cache=True, nogil=True)
def pdep_soft(x, m):
    """The low bits of x spread, in order, over the set positions of m."""
    res = _ZERO
    bb = _ONE
    while m:
        if x & bb:
            res |= m & (~m + _ONE)
        bb <<= _ONE
        m &= m - _ONE
    return res


@intrinsic
def _cttz(typingctx, x):
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64")
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return types.uint64(types.uint64), codegen


@njit(cache=True, nogil=True)
def ctz(x):
    """Index of the lowest set bit of x (64 for x = 0)."""
    return np.int64(_cttz(np.uint64(x)))


@intrinsic
def _ctpop(typingctx, x):
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64]), "llvm.ctpop.i64")
        return builder.call(fn, args)

    return types.uint64(types.uint64), codegen


@njit(cache=True, nogil=True)
def popcount(x):
    """Number of set bits of x (a nonnegative integer below 2^64)."""
    return np.int64(_ctpop(np.uint64(x)))


def _bmi2_intrinsic(name: str):
    @intrinsic
    def _call(typingctx, x, m):
        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64]), name)
            return builder.call(fn, args)

        return types.uint64(types.uint64, types.uint64), codegen

    return _call


HAS_BMI2 = bool(llvm.get_host_cpu_features().get("bmi2", False))

if HAS_BMI2:
    _pext_hw = _bmi2_intrinsic("llvm.x86.bmi.pext.64")
    _pdep_hw = _bmi2_intrinsic("llvm.x86.bmi.pdep.64")

    @njit(cache=True, nogil=True)
    def pext(x, m):
        """pext(x, m) (BMI2 instruction)."""
        return _pext_hw(np.uint64(x), np.uint64(m))

    @njit(cache=True, nogil=True)
    def pdep(x, m):
        """pdep(x, m) (BMI2 instruction)."""
        return _pdep_hw(np.uint64(x), np.uint64(m))

else:
    pext = pext_soft
    pdep = pdep_soft
