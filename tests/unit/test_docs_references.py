"""What README.md and docs/*.md name exists: module paths, dotted ``module.attribute``
references to the library or the tools, and relative links (their anchors too).

Plain Python: a reference is checked by importing its module and reading the attribute,
a path or link by looking at the checkout, so documentation that drifts from the code
fails here, naming the page and the reference.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("glue_incremental", "glue_incremental_tools")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Pages other branches are writing; a link to them may land before the page does (none now).
NOT_YET_WRITTEN: set[str] = set()
# Spark's own names that start like the library's `spark` module (settings, the API).
SPARK_NAMES = re.compile(r"spark\.(sql|read|driver|jars|executor|hadoop)\b")
PACKAGE_PATH = re.compile(r"(lib/)?glue_incremental(_tools)?/[\w/]*")
FILE_SUFFIXES = (".py", ".zip", ".json", ".md", ".tf", ".tfvars", ".hcl", ".txt", ".yml")
# Files a reader writes: the names the pages give them, not files of this checkout.
READERS_FILES = {
    "daily_revenue.py",  # custom-jobs.md: where to save the example script
    "glue_scripts/daily_revenue.py",  # custom-jobs.md: where the local stack's deploy finds it
    "packages/teams_orders/masks.py",  # transforms.md: a team's transform package
}


def code_spans(text: str, fenced: bool = True) -> list[str]:
    """The text of every inline code span, and of every fenced block when ``fenced``."""
    spans = re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    prose = re.sub(r"^```[a-z]*\n.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return (spans if fenced else []) + re.findall(r"`([^`\n]+)`", prose)


@cache
def module_names() -> dict[str, str]:
    """Each library or tools module by its dotted path below its package, and by its last
    name where that is unique: ``sources.files`` and ``files`` -> ``glue_incremental.sources.files``."""
    full: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / "lib" / package).rglob("*.py")):
            parts = path.relative_to(ROOT / "lib").with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            dotted = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            full[dotted] = dotted
            if dotted != package:
                full.setdefault(dotted.removeprefix(package + "."), dotted)
    leaves: dict[str, list[str]] = {}
    for dotted in set(full.values()):
        leaves.setdefault(dotted.rsplit(".", 1)[-1], []).append(dotted)
    for leaf, found in leaves.items():
        if len(found) == 1:
            full.setdefault(leaf, found[0])
    return full


@cache
def names_in_the_code() -> frozenset[str]:
    """What the packages' source spells out: every string constant (hook points, summary
    keys, settings), every dotted expression (``hooks.point``, ``config.is_jdbc``), and
    ``step.suffix`` for an f-string ``f"{step}.suffix"`` whose ``step`` is a constant."""
    found: set[str] = set()
    suffixes: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / "lib" / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found.add(node.value)
                elif isinstance(node, ast.Attribute):
                    found.add(ast.unparse(node))
                elif isinstance(node, ast.JoinedStr) and isinstance(node.values[-1], ast.Constant):
                    suffixes.add(str(node.values[-1].value))
    found |= {prefix + suffix for prefix in set(found) for suffix in suffixes if suffix[:1] == "."}
    return frozenset(found)


def resolves(reference: str) -> bool:
    """``module.attr.attr``: the longest known module prefix imported, the rest read from it."""
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = module_names().get(".".join(parts[:cut]))
        if module_name is None:
            continue
        value: object = importlib.import_module(module_name)
        for name in parts[cut:]:
            if isinstance(value, ModuleType) and not hasattr(value, name):
                try:
                    importlib.import_module(f"{value.__name__}.{name}")
                except ImportError:
                    return False
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


def dotted_references(text: str) -> set[str]:
    """``a.b`` names whose first part is a module of the library or the tools."""
    found: set[str] = set()
    for span in code_spans(text, fenced=False):
        for token in re.findall(r"(?<![\w./$-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w/-])", span):
            if token.endswith(FILE_SUFFIXES) or SPARK_NAMES.match(token):
                continue
            if token.split(".", 1)[0] in module_names():
                found.add(token)
    return found


def module_paths(text: str) -> set[str]:
    """Paths into the packages (``lib/glue_incremental/x.py``, ``glue_incremental/sub/``),
    and any other ``dir/x.py`` or ``x.py`` a code span names."""
    found: set[str] = set()
    for span in code_spans(text):
        for token in re.findall(r"[\w./*<>-]+", span):
            # A placeholder (`<id>`), a glob, a bare suffix or the rest of a split path.
            if re.search(r"[<>*]", token) or token.startswith((".", "/")) or token in READERS_FILES:
                continue
            if token.endswith(".py") or PACKAGE_PATH.fullmatch(token):
                found.add(token.rstrip("."))
    return found


@cache
def repository_files() -> tuple[str, ...]:
    skip = {".git", ".venv", ".venv-checkov", ".venv-localstack", "build", "node_modules"}
    return tuple(
        path.relative_to(ROOT).as_posix()
        for path in ROOT.rglob("*")
        if not skip & set(path.relative_to(ROOT).parts)
    )


def path_exists(token: str) -> bool:
    """Relative to the checkout, to ``lib/``, or as the end of some file's path."""
    token = token.removeprefix("./").rstrip("/")
    if (ROOT / token).exists() or (ROOT / "lib" / token).exists():
        return True
    return any(name == token or name.endswith("/" + token) for name in repository_files())


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = page.read_text()
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    headings = {slug(title) for title in re.findall(r"^#+ (.+)$", prose, flags=re.MULTILINE)}
    return headings | set(re.findall(r'<a id="([^"]+)"></a>', text))


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    broken: list[str] = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if linked.relative_to(root).as_posix() in NOT_YET_WRITTEN:
            continue
        if not linked.exists():
            broken.append(target)
            continue
        if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)
    return broken


def page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_dotted_reference_of_a_page_resolves(page):
    text = page.read_text()
    missing = sorted(
        reference
        for reference in dotted_references(text)
        if reference not in names_in_the_code() and not resolves(reference)
    )
    assert missing == [], f"{page_id(page)} names what the code does not have: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_module_path_of_a_page_exists(page):
    missing = sorted(path for path in module_paths(page.read_text()) if not path_exists(path))
    assert missing == [], f"{page_id(page)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_of_a_page_resolves(page):
    assert broken_links(page) == [], f"{page_id(page)} has broken links"


def test_the_pages_not_yet_written_are_still_missing():
    # Once the page lands, its allow-list entry goes and the link is checked like any other.
    assert [name for name in NOT_YET_WRITTEN if (ROOT / name).exists()] == []


def test_a_reference_resolves_through_modules_and_attributes():
    assert resolves("glue_incremental.args.markdown_table")
    assert resolves("sources.files.plan_from_listing") and resolves("targets.registry.FACTORIES")
    assert not resolves("load._no_such_function") and not resolves("no_such_module.x")


def test_references_are_found_in_code_spans_only_and_spark_settings_are_not_the_library():
    text = "`load.main` and `spark.sql.shuffle.partitions`, but not load.prose\n"
    assert dotted_references(text) == {"load.main"}
    assert module_paths("see `lib/glue_incremental/load/job.py` and `x/gone.py`") == {
        "lib/glue_incremental/load/job.py",
        "x/gone.py",
    }


def test_a_link_to_a_missing_file_or_anchor_is_broken(tmp_path):
    page = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("# Title: `code` here\n")
    page.write_text("[ok](b.md#title-code-here) [bad](b.md#gone) [gone](c.md)\n")
    assert broken_links(page, root=tmp_path) == ["b.md#gone", "c.md"]


def test_the_docs_index_lists_every_page():
    index = (ROOT / "docs" / "README.md").read_text()
    listed = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages <= listed, f"docs/README.md does not list {sorted(pages - listed)}"
