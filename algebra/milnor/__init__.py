"""The Milnor basis at p = 2 and at odd p, its compiled products and product tables, profiles and sub-Hopf
algebras: everything that multiplies in A. Imports fp and gpu only."""
