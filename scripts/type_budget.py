"""How loosely typed the library is: ``Any`` and ``cast(`` per package, against a budget.

``Any`` is counted as a name in code (the ``typing`` import lines are not counted, a word
in a comment or docstring is not code), ``cast(`` as calls of ``typing.cast`` (``cast(...)``
or ``typing.cast(...)``; a Spark ``Column.cast(...)`` is a conversion, not a type cast). The budget
(issue 40's "narrow, typed seams"): fewer than 10 ``Any`` per 1,000 library lines and
fewer than 15 ``cast(`` in the whole library.

``python scripts/type_budget.py`` prints the figures per package; ``--check`` also fails
when the library is over budget (``make lint``).
"""

from __future__ import annotations

import argparse
import io
import sys
import tokenize
from collections import Counter
from pathlib import Path

LIBRARY = Path(__file__).resolve().parent.parent / "lib" / "glue_incremental"
ANY_PER_1000_LINES = 10
CASTS = 15


def _counts(path: Path) -> tuple[int, int, int]:
    """(lines, Any names, cast calls) of one module."""
    source = path.read_text()
    anys = casts = 0
    importing = False
    previous = ""
    # The name before ``cast`` when it is an attribute (``x.cast``): only ``typing.cast`` counts.
    owner: str | None = None
    before = ("", "")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME and token.string in ("import", "from"):
            importing = True
        elif token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            importing = False
        elif token.type == tokenize.NAME and not importing:
            if token.string == "Any":
                anys += 1
        elif (
            token.type == tokenize.OP
            and token.string == "("
            and previous == "cast"
            and owner in (None, "typing")
        ):
            casts += 1
        if token.type == tokenize.NAME and token.string == "cast":
            owner = before[0] if before[1] == "." else None
        if token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            before = (before[1], token.string)
        previous = token.string if token.type == tokenize.NAME else ""
    return len(source.splitlines()), anys, casts


def measure(root: Path = LIBRARY) -> dict[str, Counter[str]]:
    """Lines, ``Any`` and ``cast(`` per package (top-level modules under ``(top)``)."""
    packages: dict[str, Counter[str]] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        package = relative.parts[0] if len(relative.parts) > 1 else "(top)"
        lines, anys, casts = _counts(path)
        packages.setdefault(package, Counter()).update(lines=lines, Any=anys, cast=casts)
    return packages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when over budget")
    options = parser.parse_args(argv)
    packages = measure()
    total: Counter[str] = Counter()
    for name, counts in packages.items():
        total.update(counts)
        print(
            f"{name:<14} {counts['lines']:>6} lines {counts['Any']:>5} Any {counts['cast']:>4} cast("
        )
    per_1000 = 1000 * total["Any"] / max(total["lines"], 1)
    print(
        f"{'library':<14} {total['lines']:>6} lines {total['Any']:>5} Any {total['cast']:>4} cast("
        f"  ({per_1000:.1f} Any per 1,000 lines; budget < {ANY_PER_1000_LINES}, cast( < {CASTS})"
    )
    if options.check and (per_1000 >= ANY_PER_1000_LINES or total["cast"] >= CASTS):
        print("type budget: the library is over budget (figures above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
