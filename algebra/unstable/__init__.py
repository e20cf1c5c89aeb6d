"""The unstable algebra: the Milnor basis in excess order, free unstable modules, and a module seen over it.
Imports the algebra rooms below it."""
