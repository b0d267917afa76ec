"""Incremental sources: what a run reads and the state it leaves for the next one."""
