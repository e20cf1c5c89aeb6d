"""The secondary Steenrod algebra at p = 2 as a pair algebra (Z/4 products, Y-parts, A-terms) and the memo of
its products: what the d2 lifts multiply with. Imports algebra.milnor and algebra.free."""
