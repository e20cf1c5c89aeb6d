"""Chain maps between resolutions and null-homotopies, lifted through the target resolution's preimages: the
one lifting engine that products, Massey products, Sq^0 and d2 use. Imports nassau.engine."""
