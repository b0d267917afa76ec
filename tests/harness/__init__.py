"""Real local stand-ins for the cloud: an AWS-compatible HTTP endpoint and PostgreSQL."""
