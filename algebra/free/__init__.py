"""Free modules over A (generator-major bases) and maps between them, whose matrices are built by batched
Milnor products; the left action of A on their elements. Imports algebra.milnor."""
