"""What a run costs before it runs, and the memory budget it holds while it runs (docs/estimate.md)."""
