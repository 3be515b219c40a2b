"""`matrix select --mode pr` against an oracle that shares no code with it (tests/matrix/pr_oracle.py).

Outside references: the upstream tree and history (the bundle in ../shared/fixtures/upstream), each commit's own
``config.json`` files, ``main/CMakeLists.txt`` and (where the commit has it) ``scripts/build.py`` for each
variant's sdkconfig fragment at that commit, esp-idf-kconfig for resolving it through that commit's Kconfig and
defaults, and gcc's preprocessor for what each variant compiles. For every replayed commit, every class is
judged on that commit's tree (`pr_oracle.judge`):
- link: every member compiles the same gated sources of ``main/CMakeLists.txt`` and resolves the symbols of
  every condition gating a source alike (classes with and without a unit);
- compile: every member preprocesses the class's unit exactly as the representative does, and resolves every
  ``CONFIG_*`` symbol of the files gcc read for it to the same value.
The default run replays a fixed window chosen to cover every kind of change PR mode classifies, two of its
commits from before the 2026-07-27 board-directory reorganisation; `-m slow` replays every commit with classes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.matrix import pr_oracle

XZBUILD = str(Path(sys.executable).with_name("xzbuild"))

#: The default window, by upstream commit id (the bundle's commits carry it as ``upstream-commit:``), and what
#: each is in it for. `test_default_window_covers_every_kind` checks the kinds from the selections themselves.
WINDOW = {
    "90311fc8fbb8968ceb0cd37a4c8ff1ac855724a7": "pre-reorganisation: shared source and header, listing-only CMake "
                                                "edit, Kconfig change removing an option (issue 32's commit)",
    "5b55606415d01d026c95e487c3148d21270f5d84": "pre-reorganisation: Kconfig change for an added board",
    "66bf9f7c1dece87cb23ab2b9d23d05e7744a9c9b": "the same shared source after the reorganisation",
    "e0074e90ce1c9286eda107ab11cc9f4002e7e188": "a codec header through its includers",
    "dd99da00dc4c89ed4ab07fcec038c03f13f4de50": "link classes only (Kconfig change reaching no unit)",
    "d9f0ef13aa7501be50fca54db9d175151ba67867": "fonts from the board branch the commit's own board symbol takes "
                                                "(Korvo2 V3 was BOARD_TYPE_ESP32S3_KORVO2_V3)",
    "cf59430991d1df6a707afa9e59a1d79734535cf1": "a variant built for another target than today's "
                                                "(ESP32-C6-Touch-AMOLED-2.06's config.json said esp32s3)",
}


#: Upstream's "refactor: organize boards by manufacturer (#2153)", 2026-07-27.
REORGANISATION = "d91d6824309d12df5fc3db5edf8145ee829135d7"


def upstream_rev(repo: Path, upstream: str) -> str:
    """The commit of ``repo`` that is upstream's ``upstream`` (itself in a real clone, by the bundle's
    ``upstream-commit:`` line otherwise)."""
    found = subprocess.run(["git", "-C", str(repo), "log", "--format=%H", f"--grep=^upstream-commit: {upstream}"],
                           capture_output=True, text=True, check=True).stdout.split()
    if found:
        return found[0]
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", f"{upstream}^{{commit}}"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="session")
def records(shared_fixtures: Path) -> list[dict[str, object]]:
    """Today's variants as upstream lists them (names, targets, board dirs)."""
    return json.loads((shared_fixtures / "upstream" / "list-boards-idf-6.0.2.json").read_text(encoding="utf-8"))


def _select(repo: Path, rev: str, boards: Path) -> dict[str, object]:
    proc = subprocess.run([XZBUILD, "matrix", "select", "--boards", str(boards), "--repo", str(repo), "--base",
                           f"{rev}^", "--head", rev, "--mode", "pr", "--json"], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def window(upstream_history: Path, repo_root: Path, records, tmp_path_factory: pytest.TempPathFactory
           ) -> list[tuple[str, dict[str, object], pr_oracle.Verdict]]:
    """The default window, selected and judged once for the tests below."""
    work = tmp_path_factory.mktemp("pr-oracle")
    started = time.perf_counter()
    out = []
    for upstream in WINDOW:
        rev = upstream_rev(upstream_history, upstream)
        selection = _select(upstream_history, rev, repo_root / "boards")
        verdict = pr_oracle.judge(upstream_history, rev, selection["classes"], records, work)  # type: ignore[arg-type]
        out.append((rev, selection, verdict))
    _report([v for _, _, v in out], time.perf_counter() - started)
    return out


def _report(verdicts: list[pr_oracle.Verdict], seconds: float) -> None:
    for v in verdicts:
        print(f"{v.commit}: {v.classes} classes, {v.link_checks} link checks, {v.gcc_runs} gcc -E runs, "
              f"{len(v.refuted)} refuted, {len(v.unjudged)} member(s) without a build at that commit, "
              f"{v.unnecessary} unnecessary split(s)")
    print(f"replayed {len(verdicts)} commit(s) in {seconds:.0f} s: {sum(v.gcc_runs for v in verdicts)} gcc runs, "
          f"{sum(v.link_checks for v in verdicts)} link checks, {sum(len(v.refuted) for v in verdicts)} refuted")


@pytest.mark.timeout(900)  # the window's fixture runs here: about 50 s of CPU, minutes of wall on a loaded host
def test_pr_classes_hold_on_the_default_window(window) -> None:
    """Every class of every commit of the window holds for its link and, with a unit, under gcc."""
    refuted = [r for _, _, v in window for r in v.refuted]
    assert all(v.classes for _, _, v in window), "a window commit selected no class"
    assert not refuted, f"{len(refuted)} class member(s) differ: {refuted[:5]}"


@pytest.mark.timeout(900)
def test_default_window_covers_every_kind(window, upstream_history: Path) -> None:
    """The window holds each kind of change PR mode classifies (read from the selections and the diffs)."""
    kinds: set[str] = set()
    pre_reorganisation = 0
    reorganisation = upstream_rev(upstream_history, REORGANISATION)
    for rev, selection, _ in window:
        classes = selection["classes"]
        paths = {str(c["path"]) for c in classes}  # type: ignore[union-attr]
        if any(p.endswith((".c", ".cc", ".cpp")) for p in paths):
            kinds.add("shared source")
        if any(p.endswith((".h", ".hpp")) and c["unit"] and c["unit"] != p for c in classes for p in [c["path"]]):  # type: ignore[union-attr]
            kinds.add("header through includers")
        if any(p.startswith("main/CMakeLists.txt (") for p in paths):
            kinds.add("listing-only CMake edit")
        if any(p.startswith(("main/Kconfig.projbuild", "sdkconfig.defaults")) for p in paths):
            kinds.add("Kconfig/defaults change")
        if any(c["unit"] is None for c in classes):  # type: ignore[union-attr]
            kinds.add("link class")
        diff = subprocess.run(["git", "-C", str(upstream_history), "diff", f"{rev}^", rev, "--",
                               "main/Kconfig.projbuild"], capture_output=True, text=True, check=True).stdout
        removed = {line.split()[1] for line in diff.splitlines() if line.startswith("-    config ")}
        added = {line.split()[1] for line in diff.splitlines() if line.startswith("+    config ")}
        if removed - added and "main/Kconfig.projbuild" in paths:
            kinds.add("removed option")
        pre_reorganisation += subprocess.run(["git", "-C", str(upstream_history), "merge-base", "--is-ancestor", rev,
                                              f"{reorganisation}^"], capture_output=True, check=False).returncode == 0
    assert kinds == {"shared source", "header through includers", "listing-only CMake edit",
                     "Kconfig/defaults change", "link class", "removed option"}
    assert pre_reorganisation >= 2


@pytest.mark.timeout(900)
def test_esp_box_3_keeps_its_device_aec_before_the_reorganisation(window, upstream_history: Path, records,
                                                                  tmp_path: Path) -> None:
    """Upstream 90311fc8fb (issue 32): esp-box-3's own config.json appends CONFIG_USE_DEVICE_AEC=y, which that
    commit's Kconfig keeps (USE_AUDIO_PROCESSOR: ESP32-S3 with SPIRAM from sdkconfig.defaults.esp32s3), so its
    wifi_board.cc class must neither be represented by a variant with AEC off nor stand for one."""
    rev, selection, _ = window[0]
    assert rev == upstream_rev(upstream_history, "90311fc8fbb8968ceb0cd37a4c8ff1ac855724a7")
    tree = pr_oracle.archive(upstream_history, rev, tmp_path / "tree")
    at = pr_oracle.commit_fragments(tree, records)
    resolve = pr_oracle.Defines(tree)
    try:
        def aec(name: str) -> str | None:
            return pr_oracle.values(resolve(at[name][0].target, at[name][1])).get("USE_DEVICE_AEC")

        assert at["espressif-esp-box-3"][0].board == "esp-box-3"
        assert aec("espressif-esp-box-3") == "1"
        classes = [c for c in selection["classes"]  # type: ignore[union-attr]
                   if c["unit"] == "main/boards/common/wifi_board.cc" and "espressif-esp-box-3" in c["members"]]
        assert len(classes) == 1
        assert "USE_DEVICE_AEC=y" in str(classes[0]["key"])  # PR mode's own resolution agrees
        assert aec(classes[0]["representative"]) == "1"
        assert {m: aec(m) for m in classes[0]["members"]} == {m: "1" for m in classes[0]["members"]}
    finally:
        resolve.close()


def _history(repo: Path) -> list[str]:
    """The bundle's 300 first-parent commits that have a parent, newest first."""
    revs = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "--parents", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    return [line.split()[0] for line in revs if len(line.split()) > 1][:300]


@pytest.mark.slow
@pytest.mark.timeout(0)
def test_pr_classes_hold_on_the_whole_history(upstream_history: Path, repo_root: Path, records,
                                              tmp_path: Path) -> None:
    """Every first-parent commit of the bundle (300) whose PR selection has classes."""
    started = time.perf_counter()
    verdicts = []
    for rev in _history(upstream_history):
        selection = _select(upstream_history, rev, repo_root / "boards")
        if selection.get("classes"):
            verdicts.append(pr_oracle.judge(upstream_history, rev, selection["classes"], records, tmp_path))  # type: ignore[arg-type]
    _report(verdicts, time.perf_counter() - started)
    refuted = [r for v in verdicts for r in v.refuted]
    assert verdicts and not refuted, f"{len(refuted)} class member(s) differ: {refuted[:5]}"


def _window_commit(window, upstream_history: Path, upstream: str) -> tuple[str, dict[str, object]]:
    rev = upstream_rev(upstream_history, upstream)
    return next((r, selection) for r, selection, _ in window if r == rev)


@pytest.mark.timeout(900)
def test_fonts_follow_the_commits_own_board_branch(window, upstream_history: Path, records, tmp_path: Path) -> None:
    """Upstream d9f0ef13aa: Korvo2 V3's board symbol was BOARD_TYPE_ESP32S3_KORVO2_V3, whose CMake branch sets
    its own fonts; lcd_display.cc declares the fonts it is compiled with, so no variant with other fonts may
    stand for it (before the fix, today's symbol found no branch and 27 variants shared one class)."""
    rev, selection = _window_commit(window, upstream_history, "d9f0ef13aa7501be50fca54db9d175151ba67867")
    tree = pr_oracle.archive(upstream_history, rev, tmp_path / "tree")
    at = pr_oracle.commit_fragments(tree, records)
    resolve = pr_oracle.Defines(tree)
    try:
        def fonts(name: str) -> dict[str, str]:
            return pr_oracle.font_values(tree, pr_oracle.values(resolve(at[name][0].target, at[name][1])))

        korvo = fonts("espressif-esp32s3-korvo2-v3")
        assert korvo["BUILTIN_TEXT_FONT"] == "font_puhui_basic_20_4"  # the tree's branch, read by the oracle
        classes = [c for c in selection["classes"]  # type: ignore[union-attr]
                   if c["unit"] == "main/display/lcd_display.cc" and "espressif-esp32s3-korvo2-v3" in c["members"]]
        assert len(classes) == 1
        assert "BUILTIN_TEXT_FONT=font_puhui_basic_20_4" in str(classes[0]["key"])
        assert {m: fonts(m) for m in classes[0]["members"] if m in at} == \
            {m: korvo for m in classes[0]["members"] if m in at}
    finally:
        resolve.close()


@pytest.mark.timeout(900)
def test_a_variant_keys_on_the_target_its_commit_builds(window, upstream_history: Path, records,
                                                        tmp_path: Path) -> None:
    """Upstream cf59430991: waveshare/esp32-c6-touch-amoled-2.06/config.json said target esp32s3, so that commit
    built the variant for the ESP32-S3: its classes are esp32s3 ones, not the esp32c6 ones today's file gives."""
    rev, selection = _window_commit(window, upstream_history, "cf59430991d1df6a707afa9e59a1d79734535cf1")
    tree = pr_oracle.archive(upstream_history, rev, tmp_path / "tree")
    build, _ = pr_oracle.commit_fragments(tree, records)["waveshare-esp32-c6-touch-amoled-2.06"]
    assert build.target == "esp32s3"
    classes = [c for c in selection["classes"]  # type: ignore[union-attr]
               if "waveshare-esp32-c6-touch-amoled-2.06" in c["members"]]
    assert classes
    assert all("target=esp32s3" in str(c["key"]) for c in classes), [c["key"] for c in classes]


def test_font_values_execute_the_cmake_the_configuration_takes(tmp_path: Path) -> None:
    """The oracle's own CMake reading: a top-level default, the first branch the values select (a board line
    Kconfig dropped leaves the default board's branch), a nested set under an unknown condition."""
    (tmp_path / "main").mkdir()
    (tmp_path / "main" / "CMakeLists.txt").write_text(
        "set(BUILTIN_TEXT_FONT font_a_14_1)  # default\n"
        "set(BUILTIN_ICON_FONT icons_14_1)\n"
        "if(CONFIG_BOARD_TYPE_ONE)\n    set(BOARD_TYPE \"one\")\n"
        "elseif(CONFIG_BOARD_TYPE_TWO OR CONFIG_BOARD_TYPE_THREE)\n    set(BOARD_TYPE \"two\")\n"
        "    set(BUILTIN_TEXT_FONT font_b_20_4)\n"
        "    if(CONFIG_LANGUAGE_X AND SOMETHING)\n        set(BUILTIN_ICON_FONT icons_20_4)\n    endif()\n"
        "endif()\n", encoding="utf-8")
    assert pr_oracle.font_values(tmp_path, {"BOARD_TYPE_ONE": "1"}) == \
        {"BUILTIN_TEXT_FONT": "font_a_14_1", "BUILTIN_ICON_FONT": "icons_14_1"}
    assert pr_oracle.font_values(tmp_path, {"BOARD_TYPE_THREE": "1", "LANGUAGE_X": "1"}) == \
        {"BUILTIN_TEXT_FONT": "font_b_20_4", "BUILTIN_ICON_FONT": "?"}
    assert pr_oracle.font_values(tmp_path, {"BOARD_TYPE_TWO": "1"})["BUILTIN_ICON_FONT"] == "icons_14_1"
