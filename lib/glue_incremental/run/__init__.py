"""One run's context: its lease, typed state, commit, metrics and summary."""
