"""The one error every command raises for an expected failure (below every tool module)."""

from __future__ import annotations


class CommandError(Exception):
    """An expected failure of a command: printed as one ``error:`` line, exit code 2."""
