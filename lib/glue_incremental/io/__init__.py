"""File systems by URI scheme (file:, s3a:, s3:): Hadoop's for Spark's side, plain Python for listings."""
