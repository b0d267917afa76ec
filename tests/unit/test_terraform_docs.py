"""The Terraform READMEs' Inputs/Outputs tables are generated from the code, and a stale one fails lint."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import terraform_docs

VARIABLES = """
variable "zone" {
  description = "Where | it runs, e.g. s3://<bucket>/`<prefix>/`."
  type        = object({ name = string, mode = optional(string, "AND") })
}

variable "retries" {
  description = <<-EOT
    How often to retry:
      $${n} times.

    Then give up.
  EOT
  type        = number
  default     = 3
}

variable "labels" {
  default = null
}
"""
OUTPUTS = """
output "zone_name" {
  description = "The zone."
  value       = var.zone.name
}

output "arn" {
  value = "x"
}
"""
TABLES = """## Inputs

| Name | Description | Type | Default | Required |
|------|-------------|------|---------|:--------:|
| `labels` | n/a | `any` | `null` | no |
| `retries` | How often to retry: ${n} times.<br><br>Then give up. | `number` | `3` | no |
| `zone` | Where \\| it runs, e.g. s3://&lt;bucket>/`<prefix>/`. | `object({name = string, mode = optional(string, "AND")})` | n/a | yes |

## Outputs

| Name | Description |
|------|-------------|
| `arn` | n/a |
| `zone_name` | The zone. |"""


README = "terraform/modules/tiny/README.md"  # as the one-line errors name it, from tmp_path


def tiny_module(tmp_path: Path, readme: str) -> Path:
    module = tmp_path / "terraform" / "modules" / "tiny"
    module.mkdir(parents=True)
    (module / "variables.tf").write_text(VARIABLES)
    (module / "outputs.tf").write_text(OUTPUTS)
    (module / "README.md").write_text(readme)
    return module


def test_every_terraform_readme_matches_its_variables_and_outputs():
    roots = terraform_docs.terraform_roots()

    assert {root.relative_to(terraform_docs.TERRAFORM).parts[0] for root in roots} == {
        "modules",
        "environments",
        "ci",
    }
    assert len(roots) >= 16
    assert terraform_docs.stale(roots) == []


def test_tables_list_every_input_and_output_sorted_by_name_as_terraform_docs_does(tmp_path):
    module = tiny_module(tmp_path, "")

    rendered = terraform_docs.render(
        terraform_docs.read_inputs(module), terraform_docs.read_outputs(module)
    )

    assert rendered == TABLES


def test_a_stale_table_fails_the_check_and_make_docs_rewrites_only_between_the_markers(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    prose_before = "# tiny\n\nWhat it does.\n\n"
    prose_after = "\n\nMore prose.\n"
    stale_tables = "## Inputs\n\n| Name | Description |\n|--|--|\n| `zone` | Where. |"
    readme = tiny_module(
        tmp_path,
        f"{prose_before}{terraform_docs.BEGIN}\n{stale_tables}\n{terraform_docs.END}{prose_after}",
    ).joinpath("README.md")
    terraform = str(tmp_path / "terraform")

    assert terraform_docs.main(["--check", "--terraform", terraform]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert (
        f"{README}: its Inputs/Outputs tables differ from the .tf files; run `make docs`" in error
    )
    assert stale_tables in readme.read_text()  # --check writes nothing

    assert terraform_docs.main(["--terraform", terraform]) == 0
    assert readme.read_text() == (
        f"{prose_before}{terraform_docs.BEGIN}\n{TABLES}\n{terraform_docs.END}{prose_after}"
    )
    assert terraform_docs.main(["--check", "--terraform", terraform]) == 0


def test_a_variable_added_without_regenerating_fails_the_check(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = tiny_module(tmp_path, f"{terraform_docs.BEGIN}\n{terraform_docs.END}\n")
    terraform_docs.write([module])
    assert terraform_docs.stale([module]) == []

    with (module / "variables.tf").open("a") as variables:
        variables.write('variable "added" {\n  type = string\n}\n')

    assert terraform_docs.stale([module]) == [
        f"{README}: its Inputs/Outputs tables differ from the .tf files; run `make docs`"
    ]


@pytest.mark.parametrize(
    "readme",
    ["# tiny\n", f"{terraform_docs.END}\n{terraform_docs.BEGIN}\n", f"{terraform_docs.BEGIN}\n"],
)
def test_a_readme_without_its_markers_is_named(tmp_path, monkeypatch, readme):
    monkeypatch.chdir(tmp_path)
    module = tiny_module(tmp_path, readme)

    assert terraform_docs.stale([module]) == [
        f"{README}: needs one {terraform_docs.BEGIN} line and one {terraform_docs.END} line after it"
    ]
