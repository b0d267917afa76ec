"""The key index (key -> partition) and what a batch's keys need from it."""
