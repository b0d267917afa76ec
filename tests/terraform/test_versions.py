"""One provider constraint everywhere, the READMEs stating it, and every major the mirror holds admitted.

Every ``versions.tf`` (modules and roots) pins the AWS provider with the same
constraint; ``terraform/README.md`` quotes it verbatim. The whole Terraform suite
runs with the provider of the local mirror (``scripts/terraformrc.sh``): each major
version the mirror holds must be inside the constraint, so each is the one tested,
and the constraint admits no major the mirror does not hold (untested).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.terraform

ROOT = Path(__file__).resolve().parents[2]
TERRAFORM = ROOT / "terraform"
MIRROR = Path(os.environ.get("TF_PROVIDER_MIRROR", "/opt/tf-plugins"))
AWS_CONSTRAINT = re.compile(r'source\s*=\s*"hashicorp/aws"\s*\n\s*version\s*=\s*"([^"]+)"')


def _versions_files() -> list[Path]:
    return sorted(p for p in TERRAFORM.rglob("versions.tf") if ".terraform" not in p.parts)


def _constraints() -> dict[str, str]:
    found = {}
    for path in _versions_files():
        text = path.read_text()
        if "required_providers" not in text:
            # A provider-free module (glue_event_chain/definition) has none to constrain.
            module = "".join(tf.read_text() for tf in path.parent.glob("*.tf"))
            assert not re.search(r'^(resource|data)\s+"aws_', module, flags=re.MULTILINE), (
                f"{path.relative_to(ROOT)} uses the AWS provider without constraining it"
            )
            continue
        match = AWS_CONSTRAINT.search(text)
        assert match, f"{path.relative_to(ROOT)} does not constrain hashicorp/aws"
        found[str(path.relative_to(ROOT))] = match.group(1)
    return found


def _admits(constraint: str, version: tuple[int, ...]) -> bool:
    for part in constraint.split(","):
        operator, bound = re.match(r"\s*(>=|<=|<|>|=|~>)?\s*([0-9.]+)", part).groups()  # type: ignore[union-attr]
        wanted = tuple(int(n) for n in bound.split("."))
        checks = {
            ">=": version >= wanted,
            ">": version > wanted,
            "<": version < wanted,
            "<=": version <= wanted,
            None: version == wanted,
            "=": version == wanted,
            "~>": version >= wanted and version[: len(wanted) - 1] == wanted[: len(wanted) - 1],
        }
        if not checks[operator]:
            return False
    return True


def test_every_module_and_root_uses_one_provider_constraint():
    constraints = _constraints()
    assert len(constraints) >= 10, constraints
    assert len(set(constraints.values())) == 1, constraints


def test_the_readme_quotes_the_constraint_of_versions_tf():
    constraint = next(iter(_constraints().values()))
    readme = (TERRAFORM / "README.md").read_text()
    assert f"AWS provider `{constraint}`" in readme, (
        f"terraform/README.md must say AWS provider `{constraint}`"
    )
    stated = re.findall(r"AWS provider[^`\n]*`([^`]+)`", readme)
    assert stated and set(stated) == {constraint}, stated


def test_every_provider_major_in_the_mirror_is_admitted_and_no_untested_major_is():
    versions = [
        tuple(int(n) for n in path.name.split("."))
        for path in (MIRROR / "registry.terraform.io" / "hashicorp" / "aws").glob("*")
        if re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", path.name)
    ]
    if not versions:
        pytest.skip(f"no local provider mirror at {MIRROR}")
    constraint = next(iter(_constraints().values()))
    assert all(_admits(constraint, v) for v in versions), (constraint, versions)
    tested_majors = {v[0] for v in versions}
    untested = [
        m
        for m in range(max(tested_majors) + 1, max(tested_majors) + 3)
        if _admits(constraint, (m, 0, 0))
    ]
    assert not untested, f"{constraint} admits major(s) {untested} that no test ran against"


REQUIRED_VERSION = re.compile(r'required_version\s*=\s*"([^"]+)"')


def test_one_terraform_version_constraint_everywhere_and_the_prerequisites_state_it():
    found = {
        str(path.relative_to(ROOT)): match.group(1)
        for path in _versions_files()
        if (match := REQUIRED_VERSION.search(path.read_text()))
    }
    assert len(found) == len(_versions_files()), "a versions.tf sets no required_version"
    constraints = set(found.values())
    assert len(constraints) == 1, found
    (constraint,) = constraints
    readme = (ROOT / "README.md").read_text()
    assert f"**Terraform {constraint}**" in readme, "README's prerequisites state another version"
