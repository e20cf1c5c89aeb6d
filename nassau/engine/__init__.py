"""The resolution engine: regions, the resolution and its preimages, the standard and Nassau steps, cofibers,
the scheduler and its helpers, and `resolve` (choose the algorithm, run the jobs). Imports fp, algebra, gpu."""
