"""Ext as an algebra: classes as users write them, products by any class, filtration-one products, Massey
products, Sq^0, Yoneda representatives and Steenrod squares. Imports nassau.lifting and below."""
