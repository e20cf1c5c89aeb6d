"""Where runs are kept: the save directory (one checksummed file per bidegree), its lock, and the Dask
cluster executor that runs jobs over it. Imports nassau.engine."""
