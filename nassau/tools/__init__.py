"""The reference's further tools: text dumps of a resolution, Bruner's format, Mahowald invariants, Ext(M, N),
unstable suspensions. Imports nassau.products and below."""
