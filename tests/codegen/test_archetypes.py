"""`xzbuild boards new` per archetype: the scaffold is judged by tools that are not ours — `gcc -E -dM` on the
generated config.h (the answer given reaches the macro; every board macro the generated source uses is defined;
every pin is a GPIO the chip has), ESP-IDF's Kconfig library (esp-idf-kconfig) on the generated Kconfig.projbuild
(the new board is a member of the board choice, selectable on its target and only there), and the JSON parser on
config.json — then `boards check` and the drift gate pass."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from xzbuild.codegen.archetypes import ARCHETYPES, class_name
from xzbuild.codegen.generated_files import archetype_source_name

from .test_generate import run

# GPIOs each chip has (ESP-IDF soc caps / datasheets: ESP32-S3 GPIO 0-21 and 26-48).
S3_GPIOS = set(range(0, 22)) | set(range(26, 49))


def _gcc_macros(header: Path, work: Path) -> dict[str, str]:
    """``gcc -E -dM`` of ``header`` with an empty ``driver/gpio.h`` (the board header only names GPIO_NUM_x)."""
    import subprocess

    (work / "driver").mkdir(parents=True, exist_ok=True)
    (work / "driver" / "gpio.h").write_text("", encoding="utf-8")
    out = subprocess.run(["gcc", "-E", "-dM", "-x", "c", "-I", str(work), str(header)], capture_output=True,
                         text=True, check=True).stdout
    builtin = subprocess.run(["gcc", "-E", "-dM", "-x", "c", "/dev/null"], capture_output=True, text=True,
                             check=True).stdout
    defs = lambda text: dict(re.match(r"#define (\S+) ?(.*)", line).groups() for line in text.splitlines())  # noqa: E731
    own = defs(out)
    for name in defs(builtin):
        own.pop(name, None)
    return own


def _kconfig_selects(firmware: Path, symbol: str, target: str) -> str:
    """The value esp-idf-kconfig gives ``symbol`` when a sdkconfig fragment sets it on ``target``."""
    import contextlib
    import io

    import esp_kconfiglib

    work = firmware.parent / f"kconfig-{target}"
    work.mkdir(exist_ok=True)
    targets = "".join(f"config IDF_TARGET_{t.upper()}\n    bool\n    default {'y' if t == target else 'n'}\n"
                      for t in ("esp32", "esp32s3", "esp32c3", "esp32c6", "esp32p4"))
    (work / "Kconfig").write_text(f'mainmenu "t"\n{targets}source "{firmware / "main/Kconfig.projbuild"}"\n',
                                  encoding="utf-8")
    (work / "sdkconfig").write_text(f"CONFIG_{symbol}=y\n", encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        kconf = esp_kconfiglib.Kconfig(str(work / "Kconfig"), warn=False)
        kconf.load_config(str(work / "sdkconfig"))
    choice = kconf.named_choices["BOARD_TYPE"]
    assert symbol in [s.name for s in choice.syms], f"{symbol} is not in the BOARD_TYPE choice"
    return kconf.syms[symbol].str_value


def test_at_least_five_archetypes() -> None:
    assert len(ARCHETYPES) >= 5
    for name in ARCHETYPES:
        assert (Path(__file__).parents[2] / "templates/archetypes" / f"{name}.cc.j2").is_file()


@pytest.mark.usefixtures("gcc")  # the macro check below runs gcc -E -dM
@pytest.mark.parametrize("name", sorted(ARCHETYPES))
def test_new_board_per_archetype(name: str, firmware: Path, make_boards: Callable[..., Path]) -> None:
    boards = make_boards()
    board_dir = f"acme/{name}-kit"
    rc, _, err = run("boards", "new", board_dir, "--archetype", name, "--yes", "--boards", str(boards),
                     "--firmware", str(firmware), "--set", "BOOT_BUTTON_GPIO=48")
    assert rc == 0, err
    out = firmware / "main/boards" / board_dir
    source = out / f"{name.replace('-', '_')}_kit_board.cc"
    assert sorted(p.name for p in out.iterdir()) == sorted(["config.h", "config.json", source.name])
    assert source.name == archetype_source_name(_Board(board_dir))
    text = source.read_text(encoding="utf-8")
    assert f"DECLARE_BOARD({class_name(board_dir)});" in text
    macros = _gcc_macros(out / "config.h", firmware.parent / "cpp")
    assert macros["BOOT_BUTTON_GPIO"] == "GPIO_NUM_48"  # the answer given on the command line
    used = set(_BOARD_MACRO.findall(text))
    assert used and sorted(used - set(macros)) == []  # every board macro the source uses is defined
    pins = {k: int(v.removeprefix("GPIO_NUM_")) for k, v in macros.items() if re.fullmatch(r"GPIO_NUM_\d+", v)}
    assert pins and all(pin in S3_GPIOS for pin in pins.values()), pins
    cfg = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert (cfg["manufacturer"], cfg["type"], cfg["target"]) == ("acme", f"{name}-kit", "esp32s3")
    assert [b["name"] for b in cfg["builds"]] == [f"{name}-kit"]
    symbol = f"BOARD_TYPE_ACME_{name.upper().replace('-', '_')}_KIT"
    assert _kconfig_selects(firmware, symbol, "esp32s3") == "y"
    assert _kconfig_selects(firmware, symbol, "esp32c3") == "n"  # depends on its target
    rc, _, err = run("boards", "check", "--boards", str(boards))
    assert rc == 0, err
    rc, diff, _ = run("generate", "--firmware", str(firmware), "--boards", str(boards), "--check")
    assert rc == 0, diff
    # The generated board is in both tables.
    assert f"CONFIG_BOARD_TYPE_ACME_{name.upper().replace('-', '_')}_KIT" in (
        firmware / "main/CMakeLists.txt").read_text(encoding="utf-8")


# Prefixes of the board macros the archetype sources take from config.h.
_BOARD_MACRO = re.compile(r"\b((?:AUDIO|DISPLAY|BOOT|ML307|BUILTIN)_[A-Z0-9_]+)\b")


class _Board:
    def __init__(self, board_dir: str) -> None:
        self.dir = board_dir


@pytest.mark.parametrize(
    ("setting", "message"),
    [("NOPE=1", "has no such setting"), ("BOOT_BUTTON_GPIO=99", "not a GPIO"), ("DISPLAY_WIDTH=wide", "integer"),
     ("BOOT_BUTTON_GPIO=4", "both GPIO_NUM_4")],
)
def test_bad_answers_are_user_errors(setting: str, message: str, make_boards: Callable[..., Path]) -> None:
    boards = make_boards()
    rc, _, err = run("boards", "new", "acme/x", "--archetype", "i2s-spi-lcd", "--yes", "--boards", str(boards),
                     "--set", setting)
    assert rc == 1 and message in err and "Traceback" not in err


def test_existing_board_is_not_overwritten(make_boards: Callable[..., Path]) -> None:
    boards = make_boards()
    rc, _, err = run("boards", "new", "demo-oled", "--archetype", "i2s-simplex-oled", "--yes", "--boards", str(boards))
    assert rc == 1 and "already exists" in err


def test_interactive_prompts(make_boards: Callable[..., Path]) -> None:
    from click.testing import CliRunner

    from xzbuild.cli.main import cli

    boards = make_boards()
    arch = ARCHETYPES["i2s-simplex-oled"]
    answers = ["acme/asked", "i2s-simplex-oled"] + ["" for _ in arch.questions]
    answers[2 + [q.key for q in arch.questions].index("DISPLAY_HEIGHT")] = "32"
    result = CliRunner().invoke(cli, ["boards", "new", "-i", "--boards", str(boards)], input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "OLED height (32 or 64) [DISPLAY_HEIGHT] [64]:" in result.output
    text = (boards / "acme/asked.yaml").read_text(encoding="utf-8")
    assert "height: 32" in text and "sources: i2s-simplex-oled" in text


def test_unknown_archetype_in_board_file_names_the_line(firmware: Path, make_boards: Callable[..., Path]) -> None:
    from .conftest import LCD_BOARD, OLED_BOARD

    boards = make_boards({"demo-oled": OLED_BOARD,
                          "acme/lcd": LCD_BOARD.replace("sources: custom", "sources: no-such-shape")})
    rc, _, err = run("generate", "--firmware", str(firmware), "--boards", str(boards))
    assert rc == 1
    assert f"{boards / 'acme/lcd.yaml'}:4:" in err and "unknown archetype 'no-such-shape'" in err


TARGETS = ("esp32", "esp32c3", "esp32c5", "esp32c6", "esp32s3", "esp32p4", "esp32s31")


def test_scaffold_defaults_pass_check_on_every_target(repo_root: Path, tmp_path: Path) -> None:
    """Every archetype on every target with --yes: the whole board set (upstream's + the new ones) checks."""
    import shutil

    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    for name in sorted(ARCHETYPES):
        for target in TARGETS:
            rc, _, err = run("boards", "new", f"acme/{name}-{target}", "--archetype", name, "--target", target,
                             "--yes", "--boards", str(boards))
            assert rc == 0, (name, target, err)
            text = (boards / f"acme/{name}-{target}.yaml").read_text(encoding="utf-8")
            assert text.startswith("# yaml-language-server: $schema=../board.schema.json\n")
    rc, out, err = run("boards", "check", "--boards", str(boards))
    assert rc == 0, err


def test_scaffold_on_a_new_target_is_its_default_and_validates_against_the_schema(
        make_boards: Callable[..., Path]) -> None:
    import jsonschema
    import yaml

    boards = make_boards()
    rc, _, err = run("boards", "new", "acme/c3-kit", "--archetype", "i2s-simplex-oled", "--target", "esp32c3",
                     "--yes", "--boards", str(boards))
    assert rc == 0, err
    doc = yaml.safe_load((boards / "acme/c3-kit.yaml").read_text(encoding="utf-8"))
    assert doc["kconfig"][0]["target_default"] is True and doc["hardware"]["buttons"]["boot"] == 9
    from xzbuild.model.schema import board_schema

    jsonschema.validate(doc, board_schema())
    assert run("boards", "check", "--boards", str(boards))[0] == 0


def test_set_takes_field_names(make_boards: Callable[..., Path]) -> None:
    import yaml

    boards = make_boards()
    rc, _, err = run("boards", "new", "acme/f", "--archetype", "i2s-spi-lcd", "--yes", "--boards", str(boards),
                     "--set", "audio.mic_ws=10", "--set", "display.width=172", "--set", "BOOT_BUTTON_GPIO=3")
    assert rc == 0, err
    hw = yaml.safe_load((boards / "acme/f.yaml").read_text(encoding="utf-8"))["hardware"]
    assert (hw["audio"]["mic_ws"], hw["display"]["width"], hw["buttons"]["boot"]) == (10, 172, 3)
    rc, _, err = run("boards", "new", "acme/g", "--archetype", "i2s-spi-lcd", "--yes", "--boards", str(boards),
                     "--set", "audio.nope=1")
    assert rc == 1 and "audio.mic_ws" in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "message"), [
    ((), "stdin is not a terminal; pass --yes"),
    (("--yes", "--label", "Acme 面包板 Kit"), "labels are English"),
    (("--yes", "--label", "Acme Kit (面包板)", "--symbol", "CONFIG_BOARD_TYPE_X"), "must look like BOARD_TYPE_"),
])
def test_refused_before_anything_is_written(make_boards: Callable[..., Path], args: tuple[str, ...],
                                            message: str) -> None:
    boards = make_boards()
    rc, _, err = run("boards", "new", "acme/refused", "--archetype", "i2s-simplex-oled", "--boards", str(boards),
                     *args)
    assert rc == 1 and message in err and err.count("\n") == 1, err
    assert not (boards / "acme/refused.yaml").exists()
