"""The Inputs and Outputs tables of every Terraform README, generated from the code.

Each root under ``terraform/`` (``modules/*``, ``environments/*``, ``ci``) has a
README.md with ``<!-- BEGIN_TF_DOCS -->`` / ``<!-- END_TF_DOCS -->`` markers, the
convention of terraform-docs (a Go binary no package registry here ships). Between
them this script writes, from the ``variable`` and ``output`` blocks of the root's
``*.tf`` files (read with python-hcl2, no Terraform run), an Inputs table (name,
description, type, default, required) and an Outputs table (name, description), each
sorted by name; everything outside the markers is prose and left alone.

``python scripts/terraform_docs.py`` rewrites the tables (``make docs``);
``--check`` writes nothing and fails, one line per README, when a table is stale or
the markers are missing (``make lint``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import hcl2
from hcl2.utils import SerializationOptions

ROOT = Path(__file__).resolve().parents[1]
TERRAFORM = ROOT / "terraform"
BEGIN = "<!-- BEGIN_TF_DOCS -->"
END = "<!-- END_TF_DOCS -->"
# String values as Terraform sees them (escapes resolved); type expressions keep their source form.
_OPTIONS = SerializationOptions(
    with_comments=False, explicit_blocks=False, strip_string_quotes=True
)
# Parsing is the slow part (lark): files declaring neither block are not parsed.
_DECLARES = re.compile(r'^(variable|output)\s+"', re.MULTILINE)
_HEREDOC = re.compile(r"\A<<(-?)([A-Za-z_][A-Za-z0-9_-]*)\n(.*?)\n[ \t]*\2\Z", re.DOTALL)


@dataclass(frozen=True)
class Input:
    name: str
    description: str
    type: str
    default: str | None  # None: no default, so the input is required

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class Output:
    name: str
    description: str


def terraform_roots(terraform: Path = TERRAFORM) -> list[Path]:
    """Every directory whose README carries generated tables: modules, environments, ci."""
    roots = [*terraform.glob("modules/*"), *terraform.glob("environments/*"), terraform / "ci"]
    return sorted(root for root in roots if root.is_dir() and any(root.glob("*.tf")))


def _string(value: object) -> str:
    """A string attribute's value: heredocs dedented as ``<<-`` does, ``$${`` unescaped."""
    text = str(value)
    heredoc = _HEREDOC.match(text)
    if heredoc:
        lines = heredoc.group(3).split("\n")
        if heredoc.group(1):
            indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
            cut = min(indents, default=0)
            lines = [line[cut:] for line in lines]
        text = "\n".join(lines)
    return text.replace("$${", "${").replace("%%{", "%{").strip()


def _expression(value: object) -> str:
    text = str(value)
    return text[2:-1] if text.startswith("${") and text.endswith("}") else text


def _blocks(root: Path, kind: str) -> Iterable[tuple[str, dict[str, object]]]:
    for path in sorted(root.glob("*.tf")):
        text = path.read_text()
        if not _DECLARES.search(text):
            continue
        try:
            parsed = hcl2.loads(text, serialization_options=_OPTIONS)
        except Exception as error:  # python-hcl2 raises lark's errors: name the file once
            raise SystemExit(f"terraform_docs: cannot parse {path}: {error}") from None
        for block in parsed.get(kind, []):
            yield from block.items()


def read_inputs(root: Path) -> list[Input]:
    inputs = []
    for name, body in _blocks(root, "variable"):
        default = None
        if "default" in body:
            default = json.dumps(body["default"], ensure_ascii=False)
        inputs.append(
            Input(
                name=name,
                description=_string(body.get("description", "")),
                type=_expression(body.get("type", "any")),
                default=default,
            )
        )
    return sorted(inputs, key=lambda item: item.name)


def read_outputs(root: Path) -> list[Output]:
    outputs = [
        Output(name=name, description=_string(body.get("description", "")))
        for name, body in _blocks(root, "output")
    ]
    return sorted(outputs, key=lambda item: item.name)


def _cell(text: str) -> str:
    """Markdown of one table cell: one line, pipes escaped, ``<`` shown outside code spans."""
    if not text:
        return "n/a"
    # Wrapped lines of a heredoc are one paragraph; a blank line starts the next.
    paragraphs = [_escape_prose(" ".join(part.split())) for part in re.split(r"\n\s*\n", text)]
    return "<br><br>".join(paragraphs).replace("|", "\\|")


def _escape_prose(text: str) -> str:
    """``<`` outside code spans as ``&lt;``: GitHub would take `<bucket>` for an HTML tag and hide it."""
    parts = text.split("`")
    return "`".join(
        part if index % 2 else part.replace("<", "&lt;") for index, part in enumerate(parts)
    )


def _code(text: str) -> str:
    return "`" + " ".join(text.split()).replace("|", "\\|") + "`"


def render(inputs: list[Input], outputs: list[Output]) -> str:
    """The text between the markers, as terraform-docs' markdown table lays it out."""
    lines = ["## Inputs", ""]
    if inputs:
        lines += [
            "| Name | Description | Type | Default | Required |",
            "|------|-------------|------|---------|:--------:|",
        ]
        for item in inputs:
            default = "n/a" if item.default is None else _code(item.default)
            required = "yes" if item.required else "no"
            lines.append(
                f"| `{item.name}` | {_cell(item.description)} | {_code(item.type)} | {default} | {required} |"
            )
    else:
        lines.append("No inputs.")
    lines += ["", "## Outputs", ""]
    if outputs:
        lines += ["| Name | Description |", "|------|-------------|"]
        lines += [f"| `{item.name}` | {_cell(item.description)} |" for item in outputs]
    else:
        lines.append("No outputs.")
    return "\n".join(lines)


def _shown(path: Path) -> Path:
    """The path as the user typed the command: relative to the working directory when inside it."""
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def regenerated(root: Path) -> tuple[str, str]:
    """The root's README as it is and as it should be; raises ValueError without markers."""
    readme = root / "README.md"
    text = readme.read_text() if readme.exists() else ""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"{_shown(readme)}: needs one {BEGIN} line and one {END} line after it")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    body = render(read_inputs(root), read_outputs(root))
    return text, f"{head}{BEGIN}\n{body}\n{END}{tail}"


def stale(roots: Iterable[Path]) -> list[str]:
    """One line per README whose tables differ from the code (or that has no markers)."""
    problems = []
    for root in roots:
        try:
            current, wanted = regenerated(root)
        except ValueError as error:
            problems.append(str(error))
            continue
        if current != wanted:
            problems.append(
                f"{_shown(root / 'README.md')}: its Inputs/Outputs tables differ from the .tf files; run `make docs`"
            )
    return problems


def write(roots: Iterable[Path]) -> list[Path]:
    """Rewrite the tables of every README that is stale; returns the READMEs written."""
    written = []
    for root in roots:
        current, wanted = regenerated(root)
        if current != wanted:
            (root / "README.md").write_text(wanted)
            written.append(root / "README.md")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail when stale")
    parser.add_argument("--terraform", type=Path, default=TERRAFORM, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    roots = terraform_roots(args.terraform)
    if args.check:
        problems = stale(roots)
        for problem in problems:
            print(f"terraform_docs: {problem}", file=sys.stderr)
        return 1 if problems else 0
    try:
        written = write(roots)
    except ValueError as error:
        print(f"terraform_docs: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"terraform_docs: wrote {_shown(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
