"""Schema evolution: the pure plan of a batch against a target, and shaping rows to it."""
