"""Where a job's output goes: the Target interface (base), one package per format, the registry."""
