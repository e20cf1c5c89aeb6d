"""Slow, obvious twins the tests compare the compiled code with (Milnor products, galois RREF, test matrices).
They live with the tests: the installed package never needs them."""
