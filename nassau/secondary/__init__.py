"""The Adams d2 and E3 from the secondary Steenrod algebra, and products and Massey products in
Mod_{C lambda^2}. Imports nassau.products and below."""
