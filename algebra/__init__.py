"""The mod-2 Steenrod algebra in the Milnor basis, its sub-Hopf algebras, and modules over it."""
