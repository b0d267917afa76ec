"""Deletes: soft-delete markers and the tombstones that keep a removed key removed."""
