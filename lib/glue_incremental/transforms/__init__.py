"""A team's --transform function: loaded, applied and held to its contract."""
