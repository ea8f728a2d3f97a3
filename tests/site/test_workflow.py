"""The GitHub Pages workflow: least privilege, and a browser step that exists on its runner."""

from __future__ import annotations

import yaml

from sitekit import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def load() -> dict:
    # PyYAML reads the key "on" as True; the rest is plain data.
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_only_the_deploy_job_may_write() -> None:
    workflow = load()
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert "permissions" not in jobs["build"], "the build job runs the test suite: it gets read access only"
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["deploy"]["needs"] == "build"


def test_the_browser_step_uses_the_runners_chrome() -> None:
    """ubuntu-latest ships Google Chrome; its chromium is a snap wrapper, not Debian's package."""
    build = load()["jobs"]["build"]
    assert build["runs-on"] == "ubuntu-latest"
    runs = [step.get("run", "") for step in build["steps"]]
    assert not any("apt-get" in run and "chromium" in run for run in runs)
    browser = next(run for run in runs if "MHA_CHROMIUM" in run)
    assert "google-chrome" in browser and "$GITHUB_ENV" in browser
    assert runs.index(browser) < runs.index("make test"), "the browser is chosen before the tests run"
