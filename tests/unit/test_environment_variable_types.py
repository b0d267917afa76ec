"""Every environment root types the variables it hands to the pipeline module exactly as the module does.

The module's variable is the one place a field, its ``optional()`` default and its
validations are defined; a root repeats the type (never ``any``) so a wrong field
fails at the root's tfvars, and this test fails, naming the variable, as soon as a
root's type drifts from the module's. Plain text parsing of the ``type = ...``
expressions (no Terraform run): attribute order and layout do not matter, names,
types and defaults do.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TERRAFORM = Path(__file__).resolve().parents[2] / "terraform"
MODULE = TERRAFORM / "modules/incremental_pipeline/variables.tf"
ROOTS = sorted((TERRAFORM / "environments").glob("*/variables.tf"))

_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|//[^\n]*|/\*.*?\*/           # layout and comments: dropped
    |(?P<token>"(?:[^"\\]|\\.)*"                    # string literal
    |-?\d+(?:\.\d+)?                                # number
    |[A-Za-z_][A-Za-z0-9_-]*                        # identifier
    |[(){}\[\],=:])""",
    re.VERBOSE | re.DOTALL,
)
_CLOSING = {"(": ")", "{": "}", "[": "]"}


def tokens(text: str) -> list[str]:
    found: list[str] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"cannot read {text[position : position + 40]!r} in a type expression")
        if match.group("token") is not None:
            found.append(match.group("token"))
        position = match.end()
    return found


class _Parser:
    """Recursive descent over a type constraint; objects become dicts, so attribute order is irrelevant."""

    def __init__(self, text: str) -> None:
        self.tokens = tokens(text)
        self.at = 0

    def peek(self) -> str:
        return self.tokens[self.at]

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected!r}, got {token!r} at token {self.at}")
        self.at += 1
        return token

    def type(self) -> object:
        name = self.take()
        if name in ("string", "number", "bool", "any"):
            return name
        self.take("(")
        if name == "object":
            self.take("{")
            attributes: dict[str, object] = {}
            while self.peek() != "}":
                key = self.take()
                self.take("=")
                attributes[key] = self.type()
                if self.peek() == ",":
                    self.take()
            self.take("}")
            shape: object = ("object", attributes)
        elif name == "optional":
            inner = self.type()
            default: tuple[str, ...] | None = None
            if self.peek() == ",":
                self.take(",")
                default = self.expression()
            shape = ("optional", inner, default)
        elif name in ("map", "list", "set"):
            shape = (name, self.type())
        else:
            raise ValueError(f"unknown type constructor {name!r}")
        self.take(")")
        return shape

    def expression(self) -> tuple[str, ...]:
        """An ``optional()`` default: its tokens up to the closing parenthesis, trailing commas dropped."""
        start, depth = self.at, 0
        while depth > 0 or self.peek() != ")":
            token = self.take()
            depth += token in _CLOSING
            depth -= token in _CLOSING.values()
        kept = self.tokens[start : self.at]
        return tuple(
            t
            for i, t in enumerate(kept)
            if not (t == "," and kept[i + 1 : i + 2] in (["]"], ["}"]))
        )


def declared_types(variables_tf: Path) -> dict[str, str]:
    """Each variable's ``type = ...`` expression text, by variable name (balanced brackets, may span lines)."""
    text = variables_tf.read_text()
    found: dict[str, str] = {}
    for block in re.finditer(r'^variable "([^"]+)" \{\n', text, re.MULTILINE):
        block_end = text.find("\n}\n", block.end())
        match = re.compile(r"^  type\s*=\s*", re.MULTILINE).search(text, block.end(), block_end)
        if match is None:
            continue
        end, depth = match.end(), 0
        while depth > 0 or text[end] != "\n":
            depth += text[end] in "({["
            depth -= text[end] in ")}]"
            end += 1
        found.setdefault(block.group(1), text[match.end() : end])
    return found


def parse_type(expression: str) -> object:
    parser = _Parser(expression)
    shape = parser.type()
    if parser.at != len(parser.tokens):
        raise ValueError(f"unexpected {parser.tokens[parser.at]!r} after the type")
    return shape


MODULE_TYPES = declared_types(MODULE)


@pytest.mark.parametrize("root", ROOTS, ids=lambda path: path.parent.name)
def test_an_environment_root_types_the_module_variables_it_declares_as_the_module_does(root):
    root_types = declared_types(root)
    shared = sorted(set(root_types) & set(MODULE_TYPES))
    drifted = [
        name for name in shared if parse_type(root_types[name]) != parse_type(MODULE_TYPES[name])
    ]
    assert drifted == [], (
        f"{root.relative_to(TERRAFORM)}: type differs from {MODULE.relative_to(TERRAFORM)} for {drifted}"
    )


@pytest.mark.parametrize("root", ROOTS, ids=lambda path: path.parent.name)
def test_no_environment_variable_is_typed_any(root):
    untyped = sorted(
        name for name, expression in declared_types(root).items() if "any" in tokens(expression)
    )
    assert untyped == [], f"{root.relative_to(TERRAFORM)}: typed any: {untyped}"


def test_the_aws_root_passes_the_module_its_structured_variables_typed():
    aws = declared_types(TERRAFORM / "environments/aws/variables.tf")
    assert {"pipelines", "alarms", "oncall_subscriptions", "encryption"} <= set(aws)


def test_the_comparison_sees_a_changed_default_and_ignores_layout_and_order():
    module = 'object({\n  a = optional(string, "x") # why\n  b = list(number)\n})'
    assert parse_type('object({ b = list(number), a = optional(string, "x") })') == parse_type(
        module
    )
    assert parse_type('object({ a = optional(string, "y"), b = list(number) })') != parse_type(
        module
    )
    assert parse_type("object({ a = optional(string), b = list(number) })") != parse_type(module)
    assert parse_type('optional(list(string), ["a", ])') == parse_type(
        'optional(list(string), ["a"])'
    )
