"""The incremental load job: its options, sources, cursor, bounded batches and hard deletes."""
