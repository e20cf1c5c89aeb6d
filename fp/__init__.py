"""F2 linear algebra on packed uint64 rows (column j is bit j % 64 of word j // 64)."""
