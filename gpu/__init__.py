"""Optional CUDA backend (CuPy): batched Milnor products and large row reductions."""
