"""Refs and runners (issue 25, item 5): a revision or an image name from a workflow input stays data.

`matrix select --base/--head` values reach git, `--idf docker:IMAGE` reaches the container tool. A value that
looks like an option must be refused with one line, and — judged from the file system — git must not have
acted on it (``--output=FILE`` makes ``git diff`` write FILE).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.hostile.conftest import REPO, assert_clean_failure, run_cli


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository with two commits (a board file changes between them)."""
    root = tmp_path_factory.mktemp("refs")
    env_git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "README").write_text("one\n")
    subprocess.run([*env_git, "add", "-A"], check=True)
    subprocess.run([*env_git, "commit", "-qm", "one"], check=True)
    (root / "README").write_text("two\n")
    subprocess.run([*env_git, "commit", "-qam", "two"], check=True)
    return root


# (id, argv after `matrix select`, the option named in the error)
SELECT_CASES = [
    ("base-output-option", ["--base=--output={out}"], "--base"),
    ("head-output-option", ["--base", "HEAD~1", "--head=--output={out}"], "--head"),
    ("base-option-with-space", ["--base", "--output {out}"], "--base"),
    ("base-ext-diff", ["--base=--ext-diff"], "--base"),
    ("base-newline", ["--base", "HEAD\n--output={out}"], "--base"),
    ("base-range", ["--base", "HEAD~1..HEAD"], "--base"),
]


@pytest.mark.parametrize(("args", "option"), [c[1:] for c in SELECT_CASES], ids=[c[0] for c in SELECT_CASES])
def test_select_revision_is_never_a_git_option(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              args: list[str], option: str) -> None:
    out = tmp_path / "written-by-git"
    argv = ["matrix", "select", "--repo", str(repo), "--boards", str(REPO / "boards"),
            *[a.replace("{out}", str(out)) for a in args]]
    code, _out, err = run_cli(argv, capsys)
    assert_clean_failure(code, err, rf"{option} .*not a commit of the git repository|{option} .*expected a revision")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_select_with_real_revisions_still_works(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_cli(["matrix", "select", "--repo", str(repo), "--boards", str(REPO / "boards"),
                               "--base", "HEAD~1", "--head", "HEAD"], capsys)
    assert code == 0, err
    assert "selected 0 of" in err  # README is no board input


# (id, --idf value) — each must be refused as a runner before anything runs
RUNNERS = [
    ("docker-privileged", "docker:--privileged"),
    ("docker-flag-then-image", "docker:--privileged espressif/idf:v6.0.2"),
    ("docker-volume", "docker:-v/:/host"),
    ("docker-empty", "docker:"),
    ("docker-space", "docker:espressif/idf:v6.0.2 sh"),
    ("docker-newline", "docker:espressif/idf:v6.0.2\n"),
    ("docker-upper-path", "docker:espressif/IDF"),
]


@pytest.mark.parametrize("mode", [c[1] for c in RUNNERS], ids=[c[0] for c in RUNNERS])
def test_docker_image_must_be_an_image_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 mode: str) -> None:
    code, _out, err = run_cli(["matrix", "build", "bread-compact-wifi", "--idf", mode, "--relative-urls",
                               "--boards", str(REPO / "boards"), "--out", str(tmp_path / "out"),
                               "--cache-dir", str(tmp_path / "cache")], capsys)
    assert_clean_failure(code, err, r"--idf .* is not a container image reference \(\[registry/\]name")
    assert not (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.parametrize("image", ["espressif/idf:v6.0.2", "localhost:5000/team/idf:release-v6.0",
                                   "espressif/idf@sha256:" + "0" * 64, "idf"])
def test_image_references_of_the_docker_grammar_are_accepted(image: str) -> None:
    """The grammar of distribution/reference (what `docker pull` parses): registry host[:port], lower-case
    path components, tag, digest."""
    from xzbuild.builder.toolchain import check_runner

    check_runner("docker:" + image)
