"""F2 linear algebra on packed uint64 rows (column j is bit j % 64 of word j // 64)."""
from . import kernel_cache  # noqa: F401  (first: numba must know its cache directory before kernels load)
from .augmented import Augmented, quasi_inverse_with_identity, reduce_with_identity, reduced_with_identity
from .field import F2, PrimeField, field
from .bits import pdep, pext
from .m4ri import COUNTERS, row_reduce
from .masked import add_masked, add_unmasked, any_in_columns, gather_columns, scatter_columns
from .matmul import gf2_addmul, gf2_matmul
from .packed import check_matrix, from_bool, random_matrix, to_bool, words, zeros
from .quasi_inverse import QuasiInverse
from .row_blocks import RowBlocks
from .subspace import Subspace

__all__ = [
    "Augmented",
    "F2",
    "PrimeField",
    "field",
    "COUNTERS",
    "QuasiInverse",
    "RowBlocks",
    "Subspace",
    "add_masked",
    "add_unmasked",
    "any_in_columns",
    "check_matrix",
    "from_bool",
    "gather_columns",
    "gf2_addmul",
    "gf2_matmul",
    "pdep",
    "pext",
    "quasi_inverse_with_identity",
    "random_matrix",
    "reduce_with_identity",
    "reduced_with_identity",
    "row_reduce",
    "scatter_columns",
    "to_bool",
    "words",
    "zeros",
]
