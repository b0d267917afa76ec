"""Local tooling around the ``glue_incremental`` library: CLI, deploy, runner, demo, endpoints.

Nothing here ships to Glue. This package imports the library; the library never imports it.
"""
