"""Every module kind behind one interface (`interface.Module`): finite dimensional, finitely presented, real
projective spaces, tensor products; the sseq JSON format read (`spec`, `loader`) and written (`writer`), module
homomorphisms, and the bundled module files (`bundled/`). Imports algebra.milnor and algebra.free."""
