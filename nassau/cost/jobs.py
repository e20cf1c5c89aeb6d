"""The features of a job (s, t) that its time is a weighted sum of: the sizes of its matrix d: F_s(t) -> F_{s-1}(t)
and the generators it adds. The calibration fits the weights on measured jobs, the estimate applies them to
predicted ones: both read the features from here."""
from __future__ import annotations

import numpy as np

from algebra.module.interface import Module
from nassau.cost.sizes import free_dims
from nassau.engine.region import Region


def job_features(gens: np.ndarray, dims: np.ndarray, module: Module, region: Region,
                 jobs: list[tuple[int, int]]) -> np.ndarray:
    """One row per job (s, t): 1, F_s(t) + F_{s-1}(t), new generators x F_{s-1}(t), F_s(t) x F_{s-1}(t) (thousands
    for the products); gens[s, t - bottom] the generators of each bidegree."""
    free, below = free_grid(gens, dims, module, region)
    s = np.array([j[0] for j in jobs], dtype=np.int64)
    c = np.array([j[1] - region.min_degree for j in jobs], dtype=np.int64)
    fs, fp, g = free[s, c], below[s, c], gens[s, c]
    return np.stack([np.ones(len(jobs)), fs + fp, g * fp / 1e3, fs * fp / 1e3], axis=1)


def free_grid(gens: np.ndarray, dims: np.ndarray, module: Module, region: Region) -> tuple[np.ndarray, np.ndarray]:
    """dim F_s(t) and dim of what it maps to (F_{s-1}(t), or M_t at s = 0), indexed [s, t - bottom]."""
    free = np.array([free_dims(row, dims) for row in gens])
    m = np.array([module.dimension(region.min_degree + j) for j in range(gens.shape[1])], dtype=float)
    below = np.vstack([m[None, :], free[:-1]])
    return free, below
