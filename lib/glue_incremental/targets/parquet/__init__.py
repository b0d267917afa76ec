"""A Parquet path as a target: the partition-at-a-time writer, the publish protocol, side files."""
