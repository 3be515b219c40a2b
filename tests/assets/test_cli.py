"""The `xzbuild assets` commands end to end: outputs, JSON, and one-line errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from xzbuild.cli.main import main


def _fixture_args(assets_fx: Path, model_dir: Path) -> list[str]:
    return ["--font", str(assets_fx / "noto-fonts/cbin/font_noto_sans_common_20_4.bin"),
            "--font-meta", "common:20:4:noto-v1",
            "--emoji-dir", str(assets_fx / "noto-fonts/png/noto-color-emoji_64"),
            "--wake-word", str(model_dir)]


def test_build_inspect_preview(assets_fx: Path, model_dir: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "assets.bin"
    assert main(["assets", "build", "-o", str(out), *_fixture_args(assets_fx, model_dir)]) == 0
    assert out.read_bytes() == (assets_fx / "assets.bin").read_bytes()
    capsys.readouterr()
    assert main(["assets", "inspect", str(out), "--json", "--partition-size", "1M"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["file_count"] == 24 and report["checksum"] == 0x1C25
    assert main(["assets", "inspect", str(out)]) == 0
    text = capsys.readouterr().out
    assert "OK: the firmware would load this bundle" in text and "wn9s_nihaoxiaozhi (125,791 B)" in text
    sheet = tmp_path / "sheet.png"
    assert main(["assets", "preview", str(out), "-o", str(sheet)]) == 0
    img = Image.open(sheet)
    assert img.format == "PNG" and img.width == 1000 and img.height > 600


def test_explicit_emoji_warnings_name_the_dir(assets_fx: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An incomplete collection is packed, and stderr says what the firmware will show oddly, once per finding."""
    emo = tmp_path / "emo"
    emo.mkdir()
    (emo / "happy.png").write_bytes((assets_fx / "noto-fonts/png/noto-color-emoji_64/happy.png").read_bytes())
    Image.new("RGBA", (100, 37)).save(emo / "cool.png")
    assert main(["assets", "build", "-o", str(tmp_path / "a.bin"), "--emoji-dir", str(emo)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"wrote {tmp_path / 'a.bin'} (5,515 B, 3 members)\n"
    assert captured.err.splitlines() == [
        f"warning: {emo}: 19 of 21 standard emotions missing (neutral, laughing, funny, sad, angry, crying, loving, "
        "embarrassed, surprised, shocked, thinking, winking, relaxed, delicious, kissy, confident, sleepy, silly, "
        "confused); the firmware falls back to a font glyph for them",
        f"warning: {emo}: emoji sizes differ from the usual 100x37: happy.png is 64x64; resize them "
        "(or use `xzbuild assets emoji --from-dir`)",
    ]


def test_inspect_corrupted_bundle_fails(assets_fx: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray((assets_fx / "assets.bin").read_bytes())
    data[5000] ^= 0x55
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(data))
    assert main(["assets", "inspect", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "checksum mismatch" in captured.out
    assert f"{bad}: 1 problem(s)" in captured.err and len(captured.err.strip().splitlines()) == 1


def test_srmodels_emoji_background_commands(shared_fixtures: Path, model_dir: Path, tmp_path: Path) -> None:
    assert main(["assets", "srmodels", str(model_dir), "-o", str(tmp_path / "sr.bin")]) == 0
    assert (tmp_path / "sr.bin").read_bytes() == (shared_fixtures / "esp-sr/srmodels.bin").read_bytes()
    assert main(["assets", "emoji", "--size", "32", "-o", str(tmp_path / "emoji")]) == 0
    assert len(list((tmp_path / "emoji").glob("*.png"))) == 21
    Image.new("RGB", (50, 50), (1, 2, 3)).save(tmp_path / "bg.png")
    assert main(["assets", "background", str(tmp_path / "bg.png"), "--display", "24x16",
                 "-o", str(tmp_path / "bg.bin")]) == 0
    assert len((tmp_path / "bg.bin").read_bytes()) == 28 + 24 * 16 * 2


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from xzbuild.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("bad-font", "not a usable cbin font"),
        ("missing-font", "font file not found"),
        ("non-ascii-emoji", "printable ASCII"),
        ("long-emoji", "the limit is 31"),
        ("oversize", "but the assets partition holds 65,536 B"),
        ("bad-meta", "CHARSET:SIZE:BPP:BUNDLE"),
        ("bad-model", "_MODEL_INFO_"),
    ],
)
def test_malformed_inputs_give_one_line_errors(case: str, needle: str, assets_fx: Path, model_dir: Path,
                                               tmp_path: Path) -> None:
    args = ["assets", "build", "-o", str(tmp_path / "out.bin"), *_fixture_args(assets_fx, model_dir)]
    emoji = tmp_path / "emoji"
    emoji.mkdir()
    Image.new("RGBA", (8, 8)).save(emoji / "happy.png")
    if case == "bad-font":
        (tmp_path / "f.bin").write_bytes(b"\x00" * 64)
        args[args.index("--font") + 1] = str(tmp_path / "f.bin")
        args[args.index("--font-meta"):args.index("--font-meta") + 2] = []
    elif case == "missing-font":
        args[args.index("--font") + 1] = str(tmp_path / "nope.bin")
    elif case in ("non-ascii-emoji", "long-emoji"):
        name = "开心.png" if case == "non-ascii-emoji" else "x" * 40 + ".png"
        Image.new("RGBA", (8, 8)).save(emoji / name)
        args[args.index("--emoji-dir") + 1] = str(emoji)
    elif case == "oversize":
        args += ["--partition-size", "0x10000"]
    elif case == "bad-meta":
        args[args.index("--font-meta") + 1] = "common-20-4"
    elif case == "bad-model":
        (tmp_path / "wn9_fake").mkdir()
        (tmp_path / "wn9_fake" / "wn9_data").write_bytes(b"x")
        args[args.index("--wake-word") + 1] = str(tmp_path / "wn9_fake")
    proc = _run(*args)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert not (tmp_path / "out.bin").exists()


def test_inspect_against_a_variant_partition(assets_fx: Path, repo_root: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    golden = str(assets_fx / "assets.bin")
    boards = str(repo_root / "boards")
    assert main(["assets", "inspect", golden, "--variant", "bread-compact-esp32-lcd", "--boards", boards]) == 0
    assert "partition 1,048,576 B" in capsys.readouterr().out
    assert main(["assets", "inspect", golden, "--variant", "lceda-course-examples-eda-robot-pro",
                 "--boards", boards]) == 1
    assert "has no assets partition" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["bread-compact-wifi", "--partition-size", "1M"], "--partition-size only apply to explicit mode"),
        (["-o", "x.bin", "--emoji-size", "32"], "--emoji-size only apply to per-variant builds"),
        (["bread-compact-wifi", "-o", "x.bin"], "-o is for explicit mode"),
        ([], "give VARIANT..., --all, or -o FILE"),
    ],
)
def test_mode_specific_options_are_refused(args: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["assets", "build", *args]) == 1
    assert needle in capsys.readouterr().err
