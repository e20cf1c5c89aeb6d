"""The mod-2 Steenrod algebra in the Milnor basis, its sub-Hopf algebras, and modules over it."""
import fp  # noqa: F401  (sets up the compiled-kernel cache before any kernel here loads)
