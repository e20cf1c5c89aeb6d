"""The mod-p Steenrod algebra and modules over it, in rooms below one another: `milnor` (bases and products),
`free` (free modules and their maps), `module` (every module kind behind one interface), `secondary` (the pair
algebra behind d2), `unstable` (the unstable algebra). Imports fp (and the gpu backend), nothing above."""
import fp  # noqa: F401  (sets up the compiled-kernel cache before any kernel here loads)
