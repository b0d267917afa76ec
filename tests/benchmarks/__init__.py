"""Benchmarks of the incremental jobs against their full-reload and Spark baselines.

``python -m tests.benchmarks.run`` (``make bench``) writes ``tests/benchmarks/results/``.
"""
