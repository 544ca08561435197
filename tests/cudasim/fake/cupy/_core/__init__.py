"""``cupy._core`` of the cudasim stand-in: only what the launchers import from it."""
