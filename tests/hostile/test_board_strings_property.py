"""Property: every string field of a board file is either refused by `boards check` (its loader, `load_boards`,
called in-process: an error at file:line:col naming the field) or round-trips — the generated file, read back
by the real reader of its format, yields exactly that value.

Readers (none shares code with the generator): config.h through `gcc -E -dM`, the Kconfig table through
esp-idf-kconfig's parser, the CMake tables through Debian's `cmake -P` printing the variables, the sdkconfig lines
through esp-idf-kconfig's config loader, config.json through `json`. Expected values are the text itself, or
what the format's own rules make of it (the preprocessor's whitespace folding, CMake's `${}` expansion), written
here from the C and CMake language rules.

Text comes from hostile pieces (newlines, CR, NUL, quotes, backslashes, parentheses, `$()`, comment openers,
U+202E, directives, CMake commands...) mixed with arbitrary text, plus a plausible valid value per field so the
round-trip branch is exercised too. Default run: 8 derandomized examples per field (`XZ_PROPERTY_EXAMPLES`);
with `-m slow`, 400 random ones per field.

Fields left out, each covered elsewhere: `target`, `display_model`, `build_options` (enumerations checked
against fixed lists), `sources` (an archetype template name; tests/hostile/test_board_injection.py), `p4x.*`
(the same kinds as the variant's own fields), `config_h_columns` keys (a lookup, never written).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FACTS = "upstream_commit: 48142026b50b50f6748c003ae3b28d1cbe4cb667\nproject_ver: 0.0.1\nsdkconfig_defaults:\n  base: {}\n"
DIR = "acme/demo"
SYMBOL = "BOARD_TYPE_DEMO"


def base_board() -> dict[str, Any]:
    return {
        "type": "demo", "manufacturer": "acme", "target": "esp32s3",
        "kconfig": [{"symbol": SYMBOL, "label": "Demo Board", "target": "esp32s3", "target_default": True}],
        "variants": [{"name": "demo", "sdkconfig": {}}],
        "hardware": {"leds": {"builtin": 48}},
        "config_h_guard": "_BOARD_CONFIG_H_",
        "config_h": [{"define": "SENTINEL_BEFORE", "value": "1"}, "hardware", {"define": "SENTINEL", "value": "1"}],
    }


# --- hostile text ---------------------------------------------------------------------------------------

PIECES = ["\n", "\r", "\r\n", "\x00", "\x1b", "\t", "\u202e", "\u2066", "\u2028", "\x85", "\\", "\\\n", '"', "'",
          "(", ")", "$(", "${X}", "${BOARD_DIR}", "$ENV{HOME}", ";", "#", "##", "//", "/*", "*/", " ", "  ",
          '#include "/etc/passwd"', "execute_process(COMMAND id)", "CONFIG_X=y", "=", "..", "/", "-", ".",
          "defined", "__VA_ARGS__", "endif()", "#endif", "\u9762\u5305\u677f", "x", "A_1", "0x1F", "y"]
HOSTILE = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), min_size=1, max_size=7).map("".join)


def ident(first: str = "A-Za-z_", rest: str = "A-Za-z0-9_", size: int = 10) -> st.SearchStrategy[str]:
    return st.from_regex(rf"[{first}][{rest}]{{0,{size}}}", fullmatch=True)


PRINTABLE = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")), max_size=20)


# --- readers --------------------------------------------------------------------------------------------

def gcc_macros(header: str, include_dir: Path | None = None) -> tuple[int, dict[str, str], str]:
    """(exit status, {name or name(params): body}, stderr) of ``gcc -E -dM`` on ``header``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.h"
        path.write_bytes(header.encode("utf-8"))
        cmd = ["gcc", "-E", "-dM", "-undef", "-nostdinc", "-x", "c", str(path)]
        if include_dir is not None:
            cmd[1:1] = ["-I", str(include_dir)]
        proc = subprocess.run(cmd, capture_output=True, check=False)
    macros = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        m = re.match(r"#define (\w+(?:\([^)]*\))?) ?(.*)$", line)
        if m and not m.group(1).startswith("__"):
            macros[m.group(1)] = m.group(2)
    return proc.returncode, macros, proc.stderr.decode("utf-8", "replace")


def c_folded(text: str) -> str:
    """C translation phases 2-3 as ``-dM`` prints a body: line splices removed, whitespace runs outside string and
    character literals folded to one space, ends trimmed."""
    text = text.replace("\\\n", "")
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            while j < len(text) and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif ch in " \t\v\f":
            out.append(" ")
            while i < len(text) and text[i] in " \t\v\f":
                i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out).strip()


def kconfig_prompt(table: str, symbol: str) -> str:
    """The prompt esp-idf-kconfig reads for ``symbol`` from the generated BOARD_TYPE table."""
    import esp_kconfiglib

    top = ('mainmenu "t"\nconfig IDF_TARGET_ESP32S3\n    bool\n    default y\n'
           f'choice BOARD_TYPE\n    prompt "Board"\n{table}endchoice\n')
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Kconfig"
        path.write_text(top, encoding="utf-8")
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            kc = esp_kconfiglib.Kconfig(str(path), warn=False)
    prompts = [node.prompt[0] for node in kc.syms[symbol].nodes if node.prompt]
    assert len(prompts) == 1, prompts
    return str(prompts[0])


def cmake_values(scripts: list[str], symbol: str, names: list[str]) -> dict[str, str]:
    """Each variable of ``names`` after Debian's ``cmake -P`` runs the generated tables with ``symbol`` on."""
    with tempfile.TemporaryDirectory() as tmp:
        includes = []
        for i, text in enumerate(scripts):
            (Path(tmp) / f"t{i}.cmake").write_text(text, encoding="utf-8")
            includes.append(f'include("${{CMAKE_CURRENT_LIST_DIR}}/t{i}.cmake")')
        prints = "\n".join(f'message("@@{n}=<${{{n}}}>@@")' for n in names)
        (Path(tmp) / "main.cmake").write_text(f"set(CONFIG_{symbol} 1)\n" + "\n".join(includes) + "\n" + prints
                                              + "\n", encoding="utf-8")
        proc = subprocess.run(["cmake", "-P", str(Path(tmp) / "main.cmake")], capture_output=True, check=False)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, err
    return dict(re.findall(r"@@(\w+)=<(.*?)>@@", err, re.S))


KCONFIG_TYPES = 'mainmenu "t"\n' + "".join(f'config S_{t.upper()}\n    {t} "{t}"\n'
                                          for t in ("bool", "int", "hex", "string"))


def sdkconfig_loaded(lines: list[str], extra_kconfig: str = "") -> dict[str, str]:
    """Symbol -> value esp-idf-kconfig's config loader reads from the fragment ``lines``."""
    import esp_kconfiglib

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "Kconfig").write_text(KCONFIG_TYPES + extra_kconfig, encoding="utf-8")
        (Path(tmp) / "frag").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            kc = esp_kconfiglib.Kconfig(str(Path(tmp) / "Kconfig"), warn=False)
            kc.load_config(str(Path(tmp) / "frag"))
    return {name: sym.str_value for name, sym in kc.syms.items()}


# --- the board, boards check, generate ------------------------------------------------------------------

@dataclass
class Outcome:
    refused: list[str]  # `boards check` stderr lines (empty when accepted)
    files: dict[str, str]  # generated files when accepted


def check_and_generate(board: dict[str, Any]) -> Outcome:
    from xzbuild.codegen.generated_files import build_plan
    from xzbuild.core.errors import UserErrors
    from xzbuild.model import load_boards

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "boards"
        (root / "acme").mkdir(parents=True)
        (root / "_firmware.yaml").write_text(FACTS, encoding="utf-8")
        (root / f"{DIR}.yaml").write_text(yaml.safe_dump(board, sort_keys=False, allow_unicode=True),
                                          encoding="utf-8")
        try:  # what `boards check` runs and prints, one line per error
            board_set = load_boards(root)
        except UserErrors as exc:
            return Outcome(str(exc).splitlines(), {})
        plan = build_plan(board_set, None)
    return Outcome([], {path: data.decode("utf-8") for path, data in plan.files.items()})


def assert_refused_at(outcome: Outcome, field: str) -> None:
    """Refused: a line naming the board file's line and column, and the field."""
    where = re.compile(rf"{re.escape(DIR)}\.yaml:\d+:\d+: ")
    assert any(where.search(line) and field in line for line in outcome.refused), outcome.refused


CONFIG_H = f"main/boards/{DIR}/config.h"
CONFIG_JSON = f"main/boards/{DIR}/config.json"
KCONFIG = "xzbuild/board-types.Kconfig"
CMAKE = "xzbuild/board-table.cmake"
COMPONENTS = "xzbuild/board-components.cmake"


def baseline_macros() -> dict[str, str]:
    outcome = check_and_generate(base_board())
    rc, macros, err = gcc_macros(outcome.files[CONFIG_H])
    assert rc == 0, err
    return macros


_BASE: list[dict[str, str]] = []


def base_macros() -> dict[str, str]:
    if not _BASE:
        _BASE.append(baseline_macros())
    return _BASE[0]


# --- one row per string field ---------------------------------------------------------------------------

Setter = Callable[[dict[str, Any], str], None]
Judge = Callable[[str, Outcome], None]


def judge_define_value(value: str, out: Outcome) -> None:
    rc, macros, err = gcc_macros(out.files[CONFIG_H])
    assert rc == 0, err
    assert macros == {**base_macros(), "X": c_folded(value)}


def judge_same_macros(extra: dict[str, str]) -> Judge:
    """Comment-like fields: the header defines exactly what the board without the field defines."""
    def judge(value: str, out: Outcome) -> None:
        rc, macros, err = gcc_macros(out.files[CONFIG_H])
        assert rc == 0, err
        assert macros == {**base_macros(), **extra}
    return judge


def judge_define_name(value: str, out: Outcome) -> None:
    rc, macros, err = gcc_macros(out.files[CONFIG_H])
    assert rc == 0, err
    assert macros.get(value) == "1"
    assert set(macros) == set(base_macros()) | {value}


def judge_params(value: str, out: Outcome) -> None:
    rc, macros, err = gcc_macros(out.files[CONFIG_H])
    assert rc == 0, err
    head = "X(" + ",".join(re.findall(r"[A-Za-z_]\w*|\.\.\.", value)) + ")"
    assert macros == {**base_macros(), head: "1"}


def judge_include(value: str, out: Outcome) -> None:
    header = value.split()[0][1:-1]
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / header
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("#define INCLUDED 1\n", encoding="utf-8")
        rc, macros, err = gcc_macros(out.files[CONFIG_H], Path(tmp))
    assert rc == 0, err
    assert macros == {**base_macros(), "INCLUDED": "1"}


def judge_raw(value: str, out: Outcome) -> None:
    rc, macros, err = gcc_macros(out.files[CONFIG_H])
    own = set(re.findall(r"^[ \t]*#[ \t]*(?:define|undef)[ \t]+(\w+)", value, re.M))
    if rc != 0:  # the escape hatch may carry its own #error or macro lines; nothing else may break the header
        assert re.search(r"^[ \t]*#[ \t]*(error|define|undef)", value, re.M), err
        return
    assert {k: v for k, v in macros.items() if k.split("(")[0] not in own} == \
        {k: v for k, v in base_macros().items() if k not in own}


def judge_condition(value: str, out: Outcome) -> None:
    assert not re.search(r"[\n\r\v\f]", value)
    reference = f"#{value}\n#define INSIDE 1\n#else\n#define OUTSIDE 1\n#endif\n"
    rc_ref, ref, _ = gcc_macros(reference)
    rc, macros, err = gcc_macros(out.files[CONFIG_H])
    assert rc == rc_ref, err
    if rc == 0:
        assert macros == {**base_macros(), **ref}


def judge_guard(value: str, out: Outcome) -> None:
    rc, macros, err = gcc_macros(out.files[CONFIG_H])
    assert rc == 0, err
    assert macros == {**{k: v for k, v in base_macros().items() if k != "_BOARD_CONFIG_H_"}, value: ""}


def judge_label(value: str, out: Outcome) -> None:
    assert kconfig_prompt(out.files[KCONFIG], SYMBOL) == value


def judge_symbol(value: str, out: Outcome) -> None:
    assert kconfig_prompt(out.files[KCONFIG], value) == "Demo Board"
    assert cmake_values([out.files[CMAKE]], value, ["BOARD_DIR"]) == {"BOARD_DIR": DIR}


def judge_cmake(variable: str, expected: Callable[[str], str]) -> Judge:
    def judge(value: str, out: Outcome) -> None:
        got = cmake_values([out.files[CMAKE], out.files[COMPONENTS]], SYMBOL, [variable])
        assert got == {variable: expected(value)}
    return judge


def cmake_argument(value: str) -> str:
    """What ``set(V <value>)`` stores: a quoted argument's text with ``${NAME}`` expanded (only BOARD_DIR is set
    when the board's branch reaches its extra lines), an unquoted word as written."""
    if value.startswith('"'):
        return re.sub(r"\$\{(\w+)\}", lambda m: DIR if m.group(1) == "BOARD_DIR" else "", value[1:-1])
    if re.fullmatch(r"\$\{\w+\}", value):  # one unquoted reference: the variable's value
        return DIR if value == "${BOARD_DIR}" else ""
    return value


def judge_cmake_key(value: str, out: Outcome) -> None:
    assert cmake_values([out.files[CMAKE]], SYMBOL, [value]) == {value: "1"}


def sdk_symbol(value: str) -> str:
    """The test Kconfig option whose type the value is written for (y/n bool, numbers int/hex, else string)."""
    if value in ("y", "n"):
        return "S_BOOL"
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", value):
        return "S_HEX"
    return "S_INT" if re.fullmatch(r"-?[0-9]+", value) else "S_STRING"


def judge_sdk_value(value: str, out: Outcome) -> None:
    lines = json.loads(out.files[CONFIG_JSON])["builds"][0]["sdkconfig_append"]
    assert len(lines) == 1 and "\n" not in lines[0] and "\r" not in lines[0]
    loaded = sdkconfig_loaded(lines)
    defaults = sdkconfig_loaded([])
    symbol = sdk_symbol(value)
    if symbol == "S_STRING" and not value.startswith('"'):
        # An unquoted word (upstream writes some): Kconfig ignores the line for a string option, nothing else moves.
        assert loaded == defaults
        return
    expected = re.sub(r"\\(.)", r"\1", value[1:-1]) if value.startswith('"') else value
    assert loaded == {**defaults, symbol: expected}


def judge_sdk_key(value: str, out: Outcome) -> None:
    lines = json.loads(out.files[CONFIG_JSON])["builds"][0]["sdkconfig_append"]
    assert lines == [f"CONFIG_{value}=y"]
    assert sdkconfig_loaded(lines, f'config {value}\n    bool "k"\n')[value] == "y"


def judge_json(pick: Callable[[dict[str, Any]], Any]) -> Judge:
    def judge(value: str, out: Outcome) -> None:
        assert pick(json.loads(out.files[CONFIG_JSON])) == value
    return judge


def judge_free_text(value: str, out: Outcome) -> None:
    assert all(unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or ch == "\t"
               for ch in value)


def item(extra: dict[str, Any]) -> Setter:
    def put(board: dict[str, Any], value: str) -> None:
        board["config_h"].insert(2, {k: (value if v is None else v) for k, v in extra.items()})
    return put


def kconfig_key(key: str, wrap: Callable[[str], Any] = lambda v: v) -> Setter:
    return lambda board, value: board["kconfig"][0].__setitem__(key, wrap(value))


def variant_key(key: str, wrap: Callable[[str], Any] = lambda v: v) -> Setter:
    return lambda board, value: board["variants"][0].__setitem__(key, wrap(value))


def top_key(key: str) -> Setter:
    return lambda board, value: board.__setitem__(key, value)


def branches(value: str) -> dict[str, Any]:
    return {"branches": [{"when": value, "items": [{"define": "INSIDE", "value": "1"}]},
                         {"when": "else", "items": [{"define": "OUTSIDE", "value": "1"}]}]}


# Text holding both a double quote and a backslash, in any order and run (the two characters a Kconfig string
# escapes; board labels refuse them, the generator's Kconfig sink must still escape them).
QUOTE_AND_BACKSLASH = st.tuples(PRINTABLE, st.text(st.sampled_from(['"', "\\", "a", " "]), max_size=6), PRINTABLE).map(
    lambda t: t[0] + '"' + t[1] + "\\" + t[2])
C_TOKEN = st.sampled_from(["1", "(2 + 3)", '"a b"', "'x'", "GPIO_NUM_4", "0x1F", "x  *  y", "-1", "a \\\n b"])
HEADER = st.from_regex(r"[a-z][a-z0-9_]{0,6}(/[a-z][a-z0-9_.]{0,6})?\.h", fullmatch=True)
# (id, where the value goes, the field's dotted path in errors, a plausible valid value, the round-trip judge)
FIELDS: list[tuple[str, Setter, str, st.SearchStrategy[str], Judge]] = [
    ("define", item({"define": None, "value": "1"}), "define", ident(), judge_define_name),
    ("define-value", item({"define": "X", "value": None}), "value",
     st.lists(C_TOKEN, min_size=1, max_size=4).map(" ".join), judge_define_value),
    ("define-comment", item({"define": "X", "value": "1", "comment": None}), "comment", PRINTABLE,
     judge_same_macros({"X": "1"})),
    ("define-params", item({"define": "X", "params": None, "value": "1"}), "params",
     st.lists(ident("a-z", "a-z", 3), max_size=3, unique=True).map(lambda ps: "(" + ", ".join(ps) + ")"),
     judge_params),
    ("include", item({"include": None}), "include",
     st.one_of(HEADER.map(lambda h: f'"{h}"'), HEADER.map(lambda h: f"<{h}>")), judge_include),
    ("raw", item({"raw": None}), "raw", st.sampled_from(["", "// note", "/* a\n b */", "int x;", "enum { A, B };"]),
     judge_raw),
    ("branch-when", lambda b, v: b["config_h"].insert(2, branches(v)),
     "when", st.one_of(ident().map(lambda n: f"ifdef {n}"), ident().map(lambda n: f"ifndef {n}"),
                       C_TOKEN.map(lambda e: "if " + e.replace("\\\n", ""))), judge_condition),
    ("branch-end", lambda b, v: b["config_h"].insert(2, {**branches("if 1"), "end": v}), "end",
     PRINTABLE.map(lambda t: "// " + t), judge_same_macros({"INSIDE": "1"})),
    ("guard", top_key("config_h_guard"), "config_h_guard", ident(), judge_guard),
    ("guard-end", top_key("config_h_guard_end"), "config_h_guard_end", PRINTABLE.map(lambda t: "// " + t),
     judge_same_macros({})),
    ("hardware-note", lambda b, v: b["hardware"]["leds"].__setitem__("notes", {"builtin": v}), "notes", PRINTABLE,
     judge_same_macros({})),
    ("kconfig-label", kconfig_key("label"), "label", st.one_of(PRINTABLE, QUOTE_AND_BACKSLASH).map(
        lambda t: "Demo " + t), judge_label),
    ("kconfig-symbol", kconfig_key("symbol"), "symbol", ident("A-Z", "A-Z0-9_").map(lambda n: "BOARD_TYPE_" + n),
     judge_symbol),
    ("extra-cmake-value", kconfig_key("extra_cmake", lambda v: {"FOO": v}), "extra_cmake",
     st.one_of(ident("A-Za-z0-9", "A-Za-z0-9_.+/:-"), st.from_regex(r'"[a-z /;]{0,8}(\$\{BOARD_DIR\})?"',
                                                                     fullmatch=True)),
     judge_cmake("FOO", cmake_argument)),
    ("extra-cmake-key", kconfig_key("extra_cmake", lambda v: {v: "1"}), "extra_cmake", ident(), judge_cmake_key),
    ("emoji-collection", kconfig_key("emoji_collection"), "emoji_collection", ident("a-z", "a-z0-9_-"),
     judge_cmake("DEFAULT_EMOJI_COLLECTION", lambda v: v)),
    ("emote-resolution", kconfig_key("emote_resolution"), "emote_resolution", ident("0-9", "0-9_"),
     judge_cmake("EMOTE_RESOLUTION", lambda v: v)),
    ("cmake-hooks", kconfig_key("cmake_hooks", lambda v: [v]), "cmake_hooks", ident("a-z", "a-z0-9_"),
     judge_cmake("MAIN_PRIV_REQUIRES_EXTRA", lambda v: v)),
    ("text-font", kconfig_key("text_font"), "text_font",
     st.from_regex(r"font_noto_sans_basic_[0-9]{1,2}_[0-9]", fullmatch=True),
     judge_cmake("BUILTIN_TEXT_FONT", lambda v: v)),
    ("kconfig-extra", kconfig_key("kconfig_extra", lambda v: [v]), "kconfig_extra", PRINTABLE, judge_free_text),
    ("sdkconfig-value", variant_key("sdkconfig", lambda v: {sdk_symbol(v): v}), "sdkconfig",
     st.one_of(st.sampled_from(["y", "n", "0x1F", "-7"]), st.integers(0, 99999).map(str),
               st.from_regex(r"[a-z][a-z0-9_./]{0,8}", fullmatch=True),
               PRINTABLE.map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"')), judge_sdk_value),
    ("sdkconfig-key", variant_key("sdkconfig", lambda v: {v: "y"}), "sdkconfig", ident("A-Z", "A-Z0-9_"),
     judge_sdk_key),
    ("type", top_key("type"), "type", ident("a-z0-9", "a-z0-9.-"), judge_json(lambda d: d["type"])),
    ("variant-name", variant_key("name"), "name", ident("a-z0-9", "a-z0-9.-"),
     judge_json(lambda d: d["builds"][0]["name"])),
    ("legacy-name", variant_key("legacy_names", lambda v: [v]), "legacy_names", ident("a-z0-9", "a-z0-9._-"),
     judge_json(lambda d: d["builds"][0]["legacy_names"][0])),
    ("idf-version", variant_key("idf_version"), "idf_version", st.from_regex(r"(>=|<)[5-7]\.[0-9]", fullmatch=True),
     judge_json(lambda d: d["builds"][0]["idf_version"])),
    ("manufacturer", top_key("manufacturer"), "manufacturer", st.just("acme"),
     judge_json(lambda d: d["manufacturer"])),
]

FAST = settings(max_examples=int(os.environ.get("XZ_PROPERTY_EXAMPLES", "8")), deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck), database=None)
LONG = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def run_property(name: str, setter: Setter, field: str, judge: Judge, value: str) -> None:
    # The board file holds what YAML reads back (it folds a NEL to a space, for one): that is the value to judge.
    value = yaml.safe_load(yaml.safe_dump([value], allow_unicode=True))[0]
    board = base_board()
    setter(board, value)
    outcome = check_and_generate(board)
    if outcome.refused:
        assert_refused_at(outcome, field)
    else:
        judge(value, outcome)
    STATS[f"{name}:{'refused' if outcome.refused else 'round-tripped'}"] += 1


# Per field: how many values were refused and how many round-tripped (XZ_PROPERTY_STATS=<file> writes them).
STATS: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _write_stats() -> Any:
    yield
    target = os.environ.get("XZ_PROPERTY_STATS")
    if target:
        Path(target).write_text(json.dumps(STATS, indent=1, sort_keys=True), encoding="utf-8")


def _make(config: Any) -> Callable[..., None]:
    @pytest.mark.parametrize(("name", "setter", "field", "valid", "judge"), FIELDS, ids=[row[0] for row in FIELDS])
    def test(name: str, setter: Setter, field: str, valid: st.SearchStrategy[str], judge: Judge) -> None:
        @config
        @given(st.one_of(HOSTILE, valid))
        def prop(value: str) -> None:
            run_property(name, setter, field, judge, value)

        prop()

    return test


def test_readers_are_present() -> None:
    """The readers are real programs; under CI a missing one fails rather than skips."""
    assert shutil.which("gcc") and shutil.which("cmake"), "apt-get install gcc cmake (Makefile APT_PACKAGES)"


test_string_fields_refused_or_round_trip = _make(FAST)
test_string_fields_refused_or_round_trip_long = pytest.mark.slow(_make(LONG))


@pytest.mark.parametrize("label", ['Demo "x" \\ y', 'a\\"b', '\\"', '"\\', 'end\\', '\\\\"\\"', 'q"\\n'])
def test_kconfig_table_sink_escapes_quote_and_backslash(label: str) -> None:
    """The Kconfig board table escapes a label holding both '"' and '\\' so that esp-idf-kconfig reads back exactly
    the label, even though board files refuse such labels (defence in depth: the sink does not trust the model)."""
    from xzbuild.codegen.global_tables import BoardTypeRow, render_kconfig_entries

    table = render_kconfig_entries([BoardTypeRow(symbol=SYMBOL, label=label, target="esp32s3", dir=DIR)])
    assert kconfig_prompt(table, SYMBOL) == label


@FAST
@given(QUOTE_AND_BACKSLASH)
def test_kconfig_table_sink_round_trips_quote_and_backslash(label: str) -> None:
    from xzbuild.codegen.global_tables import BoardTypeRow, render_kconfig_entries

    table = render_kconfig_entries([BoardTypeRow(symbol=SYMBOL, label=label, target="esp32s3", dir=DIR)])
    assert kconfig_prompt(table, SYMBOL) == label


@pytest.mark.parametrize("label", ['Demo "x"', "Demo \\ y", 'Demo "a\\b"', "Demo (x)"])
def test_labels_upstream_misreads_are_refused(label: str, upstream: Path) -> None:
    """Upstream's scripts/build.py reads a board's prompt with ``bool\\s+"([^"]+)"``, without unescaping: a label
    holding '"' or '\\' would come back cut or with its escapes. Such a label is refused at the label's line; any
    other one reads back whole through upstream's own function."""
    import importlib.util

    from xzbuild.codegen.global_tables import BoardTypeRow, render_kconfig_entries

    spec = importlib.util.spec_from_file_location("upstream_build", upstream / "scripts" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = render_kconfig_entries([BoardTypeRow(symbol=SYMBOL, label=label, target="esp32s3", dir=DIR)])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Kconfig.projbuild"
        path.write_text(f'choice BOARD_TYPE\n    prompt "Board"\n{table}endchoice\n', encoding="utf-8")
        read_back = module._get_board_display_name(f"CONFIG_{SYMBOL}", path)
    board = base_board()
    board["kconfig"][0]["label"] = label
    outcome = check_and_generate(board)
    if read_back == label:
        assert not outcome.refused, outcome.refused
    else:
        assert_refused_at(outcome, "label")
