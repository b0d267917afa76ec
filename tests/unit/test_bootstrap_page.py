"""docs/bootstrap.md cannot drift from what it bootstraps: the workflow's variables and
environments, the Terraform version of every ``versions.tf``, the committed ``terraform/ci``
variables of each account layout; and the workflow picks each environment's own roles in
both layouts.

Plain Python: the page, ``.github/workflows/platform.yml`` and the ``.tf`` files are read,
GitHub's role expressions evaluated with the variables each layout sets. The page's ``sh``
blocks run in order in ``tests/e2e/test_bootstrap.py``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.harness.bootstrap import (
    PAGE,
    ROOT,
    blocks,
    hcl_blocks,
    workflow,
    workflow_environments,
    workflow_variables,
)

CI = ROOT / "terraform" / "ci"
REQUIRED_VERSION = re.compile(r'required_version\s*=\s*"([^"]+)"')
# The page's hcl blocks, in order, are these committed files.
LAYOUT_FILES = ("example.dev-account.tfvars", "example.prod-account.tfvars", "example.tfvars")
# Each layout: the committed terraform/ci variables of each of its accounts.
LAYOUTS = {
    "one account per environment": {
        "111111111111": "example.dev-account.tfvars",
        "222222222222": "example.prod-account.tfvars",
    },
    "one account for both": {"333333333333": "example.tfvars"},
}


def _github_text() -> str:
    return "".join(b.text for b in blocks() if b.kind == "github")


def test_the_page_sets_every_variable_the_workflow_reads_and_no_other():
    used = workflow_variables()
    assert {"AWS_REGION", "AWS_DEPLOY_ROLE_ARN", "AWS_PR_PLAN_ROLE_ARN_DEV"} <= used, used
    github = _github_text()
    assert set(re.findall(r"gh variable set ([A-Z0-9_]+)", github)) == used
    table = PAGE.read_text().split("The variables the workflow reads", 1)[1].split("```", 1)[0]
    assert set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table)) == used


def test_the_page_creates_every_environment_the_workflow_runs_in_with_its_deploy_role():
    environments = workflow_environments()
    assert environments == {"dev", "production"}
    github = _github_text()
    assert set(re.findall(r"environments/([a-z]+)", github)) == environments
    for variable in ("AWS_DEPLOY_ROLE_ARN", "AWS_PUBLISH_ROLE_ARN"):
        scoped = set(re.findall(rf"gh variable set {variable} --env ([a-z]+)", github))
        assert scoped == environments, variable
    # Only production's deploy waits for a reviewer.
    production = github.split("environments/production", 1)[1].split("\ngh ", 1)[0]
    assert "reviewers" in production


def _environment_commands(github: str) -> dict[str, str]:
    """environment -> every ``gh api`` command of the page on it (its lines joined)."""
    commands: dict[str, str] = {}
    for command in github.replace("\\\n", " ").splitlines():
        if match := re.search(r"repos/<owner>/<repo>/environments/([a-z]+)", command):
            commands[match.group(1)] = commands.get(match.group(1), "") + command + "\n"
    return commands


@pytest.mark.parametrize("environment", ["dev", "production"])
def test_every_environment_admits_only_main(environment):
    """The roles trust any job of the environment: only its branch policy keeps a pull
    request's edited workflow out (a check inside the workflow is the pull request's own)."""
    commands = _environment_commands(_github_text())[environment]
    assert "'deployment_branch_policy[protected_branches]=false'" in commands, commands
    assert "'deployment_branch_policy[custom_branch_policies]=true'" in commands, commands
    assert re.search(
        rf"-X POST repos/<owner>/<repo>/environments/{environment}/deployment-branch-policies\s+"
        r"-f name=main -f type=branch",
        commands,
    ), commands


def test_production_forbids_approving_ones_own_run():
    commands = _environment_commands(_github_text())
    assert "-F prevent_self_review=true" in commands["production"], commands["production"]
    assert "reviewers" not in commands["dev"], commands["dev"]


@pytest.mark.parametrize("index", range(len(blocks())))
def test_every_block_of_the_page_is_valid_bash(index):
    block = blocks()[index]
    # Placeholders stand for words: bash -n must not read <x> as a redirection.
    text = re.sub(r"<([a-z][a-z-]*)>", r"PLACEHOLDER_\1", block.text)
    checked = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, f"block {index} ({block.kind}): {checked.stderr}\n{block.text}"


def test_the_page_states_the_terraform_version_of_every_versions_tf():
    found = {
        path.relative_to(ROOT).as_posix(): match.group(1)
        for path in (ROOT / "terraform").rglob("versions.tf")
        if ".terraform" not in path.parts and (match := REQUIRED_VERSION.search(path.read_text()))
    }
    assert len(found) >= 10 and len(set(found.values())) == 1, found
    (constraint,) = set(found.values())
    for page in (PAGE, ROOT / "README.md"):
        stated = set(re.findall(r"\*\*Terraform ([^*]+)\*\*", page.read_text()))
        assert stated == {constraint}, (
            f"{page.name} says Terraform {stated}, versions.tf {constraint}"
        )


def test_the_layouts_tfvars_on_the_page_are_the_committed_files():
    assert hcl_blocks() == [(CI / name).read_text() for name in LAYOUT_FILES]


def test_the_readme_and_the_docs_index_link_the_page():
    assert "[docs/bootstrap.md](docs/bootstrap.md)" in (ROOT / "README.md").read_text()
    assert "(bootstrap.md)" in (ROOT / "docs" / "README.md").read_text()


# -- the workflow's role selection, in both layouts -------------------------------------------


def _environments(tfvars: Path) -> dict[str, str]:
    """environment -> its GitHub environment, from a terraform/ci variables file."""
    return dict(
        re.findall(
            r'^  (\w+) = \{\n\s+github_environment\s*=\s*"([^"]+)"', tfvars.read_text(), re.M
        )
    )


def _variables(layout: dict[str, str]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """What the page's github blocks set from each account's ``role_arns``: the repository's
    variables, and each GitHub environment's AWS_DEPLOY_ROLE_ARN and AWS_PUBLISH_ROLE_ARN."""
    repository: dict[str, str] = {"AWS_REGION": "eu-west-1"}
    per_environment: dict[str, dict[str, str]] = {}
    for account, tfvars in layout.items():
        for env, github_environment in _environments(CI / tfvars).items():
            arn = f"arn:aws:iam::{account}:role/gi-ci-{env}-"
            repository[f"AWS_PR_PLAN_ROLE_ARN_{env.upper()}"] = arn + "pull-request-plan"
            repository[f"AWS_PLAN_ROLE_ARN_{env.upper()}"] = arn + "plan"
            per_environment[github_environment] = {
                "AWS_DEPLOY_ROLE_ARN": arn + "deploy",
                "AWS_PUBLISH_ROLE_ARN": arn + "publish",
            }
    return repository, per_environment


def _evaluate(expression: str, **contexts: object) -> object:
    """A GitHub Actions expression of ``==``, ``&&``, ``||`` and parentheses: Python's
    ``and``/``or`` return an operand as GitHub's do."""
    body = expression.strip().removeprefix("${{").removesuffix("}}")
    python = body.replace("&&", " and ").replace("||", " or ")
    names = {k: SimpleNamespace(**v) if isinstance(v, dict) else v for k, v in contexts.items()}
    # Only the repository's own workflow is evaluated, with no builtins.
    return eval(python, {"__builtins__": {}}, names)


def _role_step(job: dict) -> dict:
    (step,) = [s for s in job["steps"] if "configure-aws-credentials" in s.get("uses", "")]
    return step["with"]


def _steps_as(job: dict) -> list[tuple[str, str]]:
    """Each ``run`` step of the job with the role-to-assume in effect when it runs (the
    last configure-aws-credentials step before it)."""
    out, expression = [], ""
    for step in job["steps"]:
        if "configure-aws-credentials" in step.get("uses", ""):
            expression = step["with"]["role-to-assume"]
        elif "run" in step:
            out.append((step["run"], expression))
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("event", ["pull_request", "push"])
def test_each_environments_plan_assumes_its_own_role_in_both_layouts(layout, event):
    repository, _ = _variables(LAYOUTS[layout])
    plan = workflow()["jobs"]["plan"]
    expression = _role_step(plan)["role-to-assume"]
    kind = "pull-request-plan" if event == "pull_request" else "plan"
    for env in plan["strategy"]["matrix"]["environment"]:
        role = _evaluate(
            expression,
            github={"event_name": event},
            matrix={"environment": env},
            vars=repository,
        )
        assert str(role).endswith(f":role/gi-ci-{env}-{kind}"), (layout, event, env, role)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_environment_applies_as_its_deploy_role_and_publishes_as_its_publish_role(layout):
    """In both layouts: the apply runs as the environment's deploy role, every
    ``deploy`` (publish, then verify) and the break-glass ``deploy switch`` as its publish
    role, which alone writes releases and updates the environment's jobs."""
    _, per_environment = _variables(LAYOUTS[layout])
    jobs = workflow()["jobs"]
    for env, names in (
        ("dev", ("apply-dev", "deploy-dev", "switch-dev")),
        ("prod", ("apply-prod", "switch-prod")),
    ):
        for name in names:
            job = jobs[name]
            # vars.AWS_*_ROLE_ARN are the job's GitHub environment's (the page's --env).
            scoped = per_environment[job["environment"]]
            for script, expression in _steps_as(job):
                role = str(_evaluate(expression, vars=scoped))
                kind = "deploy" if "terraform apply" in script else "publish"
                if re.search(r"deploy (switch )?--env|terraform apply", script):
                    assert role.endswith(f":role/gi-ci-{env}-{kind}"), (layout, name, role)
            steps = "".join(s.get("run", "") for s in job["steps"])
            assert set(re.findall(r"(\w+)\.backend\.hcl", steps)) == {env}, name
            assert set(re.findall(r"--env (\w+)", steps)) == {env}, name


def _runs(jobs: dict, event: str, ref: str = "refs/heads/main", **inputs: str) -> list[str]:
    """The jobs a run of ``event`` starts: a job's ``if`` holds and every job it needs ran
    (an ``if`` without a status function implies ``success()``)."""
    inputs = {"switch_environment": "none", **inputs} if event == "workflow_dispatch" else {}
    ran: dict[str, bool] = {}

    def runs(name: str) -> bool:
        if name not in ran:
            job = jobs[name]
            needs = job.get("needs") or []
            needs = [needs] if isinstance(needs, str) else needs
            condition = job.get("if")
            ran[name] = all(runs(n) for n in needs) and (
                condition is None
                or bool(
                    _evaluate(
                        condition,
                        github={"event_name": event, "ref": ref},
                        inputs=inputs or {"switch_environment": ""},
                    )
                )
            )
        return ran[name]

    return [name for name in jobs if runs(name)]


def test_one_approval_covers_prods_publish_apply_and_deploy():
    """Only one job of a commit's run is in the production environment (each such job
    waits for its own approval); dev keeps its apply and deploy jobs. The other production
    job is the break-glass switch, which no push starts."""
    jobs = workflow()["jobs"]
    production = [name for name, job in jobs.items() if job.get("environment") == "production"]
    assert production == ["apply-prod", "switch-prod"]
    started = _runs(jobs, "push")
    assert [name for name in production if name in started] == ["apply-prod"]
    steps = "".join(s.get("run", "") for s in jobs["apply-prod"]["steps"])
    assert "terraform apply" in steps and "deploy --env prod\n" in steps + "\n"
    assert {"apply-dev", "deploy-dev"} <= set(jobs)


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_a_break_glass_run_switches_one_job_as_the_publish_role_and_runs_nothing_else(env):
    """docs/runbook.md's rollback: a run started by hand on main with the switch inputs
    runs only that environment's ``deploy switch`` (no test, plan, apply or deploy), its
    job and release passed as variables; a run by hand without them, or a push, runs no
    switch; a branch other than main runs none."""
    jobs = workflow()["jobs"]
    dispatched = {"switch_environment": env, "switch_job": f"gi-{env}-orders"}
    assert _runs(jobs, "workflow_dispatch", **dispatched) == [f"switch-{env}"]
    assert _runs(jobs, "workflow_dispatch", "refs/heads/topic", **dispatched) == []
    for event in ("push", "workflow_dispatch"):
        assert not [name for name in _runs(jobs, event) if name.startswith("switch-")], event
    (script, _), *rest = [
        (s["run"], s) for s in jobs[f"switch-{env}"]["steps"] if "deploy switch" in s.get("run", "")
    ]
    assert not rest
    assert f'deploy switch --env {env} --job "$SWITCH_JOB" --release "$SWITCH_RELEASE"' in script
    assert "${{" not in script, "inputs must reach the script as variables"
    assert jobs[f"switch-{env}"]["env"]["SWITCH_JOB"] == "${{ inputs.switch_job }}"


def test_the_jobs_that_change_an_environment_run_one_at_a_time_across_runs():
    """apply, deploy and the break-glass switch of an environment share one job-level group
    (a switch never interleaves with main's apply or deploy), and none is cancelled half-way."""
    groups: dict[str, set[str]] = {}
    for name, job in workflow()["jobs"].items():
        environment = job.get("environment")
        if environment is None:
            continue
        concurrency = job.get("concurrency") or {}
        assert concurrency.get("cancel-in-progress") is False, (name, concurrency)
        groups.setdefault(environment, set()).add(concurrency.get("group", f"none ({name})"))
        kind = name.rsplit("-", 1)[0]
        assert kind in {"apply", "deploy", "switch"}, name
    env_of = {"dev": "dev", "production": "prod"}
    assert groups == {e: {f"platform-environment-{env_of[e]}"} for e in env_of}, groups
    jobs = workflow()["jobs"]
    assert {n for n in jobs if n.startswith(("apply-", "deploy-", "switch-"))} <= {
        n for n, j in jobs.items() if "concurrency" in j
    }
