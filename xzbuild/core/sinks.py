"""String kinds of the board model: each board-file string names the place it is written (its sink), and is
checked for that place before anything is generated.

Board files arrive in strangers' pull requests and CI turns them into C headers, Kconfig, CMake and sdkconfig
text. A value is therefore never a free ``str``: it is one of the kinds below, and :func:`problem` says, in the
words a board owner needs, what form that kind allows. Free text that legitimately reaches generated code (a
Kconfig prompt) is escaped for that format by the generator; everything else is refused when it could change
the meaning of the file around it (a newline, a quote, a comment opener, a line continuation...).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# The longest string any board-file field may hold (a long config.h value, such as an init table, fits).
MAX_LEN = 16384

_C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KCONFIG_SYMBOL = re.compile(r"[A-Za-z0-9_]+")
_BOARD_SYMBOL = re.compile(r"BOARD_TYPE_[A-Za-z0-9_]+")
_VARIANT_NAME = re.compile(r"[a-z0-9][a-z0-9.-]*")
_LEGACY_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_MANUFACTURER = re.compile(r"[a-z0-9][a-z0-9-]*")
_FILE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_DIR_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")
# A directory name under main/boards as the firmware accepts it (CMake globs it and quotes it in strings).
_FIRMWARE_DIR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_C_PARAMS = re.compile(r"\([ \t]*(?:[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*"
                       r"(?:[ \t]*,[ \t]*\.\.\.)?|\.\.\.)?[ \t]*\)")
_HEADER = r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*"
_C_INCLUDE = re.compile(rf"(<{_HEADER}>|\"(?:\.\./){{0,2}}{_HEADER}\")([ \t].*)?", re.S)
_CMAKE_UNQUOTED = re.compile(r"[A-Za-z0-9_.+/:=@%,*-]+")
# One unquoted variable reference, as upstream's 2025 chain wrote ``set(LVGL_TEXT_FONT ${FONT_PUHUI_BASIC_20_4})``.
_CMAKE_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")
_CMAKE_QUOTED = re.compile(r"\"(?:[^\"\\$]|\$\{[A-Za-z_][A-Za-z0-9_]*\})*\"")
_COMMIT_ID = re.compile(r"[0-9a-f]{40}")
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]*")
_LOCALE_DIR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_KCONFIG_EXPR = re.compile(r"[A-Za-z0-9_ ()!&|=<>\"-]+")
_CMAKE_COND_TOKEN = re.compile(r"[ \t]+|[()]|\"[^\"\\$\n;]*\"|[A-Za-z0-9_.+-]+")
# The last alternative is an unquoted word: upstream has written string values without quotes (Kconfig ignores
# such a line for a string option, and the importer keeps it as written).
_SDK_VALUE = re.compile(r"y|n|-?[0-9]+|0[xX][0-9a-fA-F]+|\"(?:[^\"\\]|\\[\"\\])*\"|[A-Za-z0-9_./+:-]+")
# Directives a raw config.h block may hold, as the importer writes them (conditionals are `branches`,
# includes are `include` items, so their nesting and targets stay checked).
_RAW_DIRECTIVES = ("define", "undef", "error", "warning", "pragma")


def text_problem(text: str, *, tabs: bool = True) -> str | None:
    """Why ``text`` is not printable one-line text (control, line-break, bidi or other format characters)."""
    if len(text) > MAX_LEN:
        return f"longer than {MAX_LEN} characters"
    for i, ch in enumerate(text):
        if ch == "\t" and tabs:
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            name = unicodedata.name(ch, "") or f"U+{ord(ch):04X}"
            what = "a line break" if ch in "\n\r\u2028\u2029\x85" else f"the character {name} (U+{ord(ch):04X})"
            return f"holds {what} at offset {i}"
    return None


def _comment(text: str) -> str | None:
    """The text of a ``// comment``: one printable line, not ending in a backslash (that would continue the
    comment onto the next generated line)."""
    return text_problem(text) or ("ends with a backslash" if text.rstrip().endswith("\\") else None)


def _endif_tail(text: str) -> str | None:
    """Text after ``#endif``/a guard's ``#endif``: a ``// comment`` or one ``/* comment */``."""
    bad = _comment(text)
    if bad:
        return bad
    body = text.strip()
    if not body:
        return None
    if body.startswith("//"):
        return None
    if body.startswith("/*") and body.endswith("*/") and "*/" not in body[2:-2] and len(body) >= 4:
        return None
    return "is not a comment"


def _c_literals(text: str) -> str | None:
    """Scan C replacement text: literals closed, no comments or stray backslashes outside them."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch:
                if text[j] == "\n":
                    return "has a string literal that is not closed on its line"
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return "has a string or character literal that is not closed"
            i = j + 1
            continue
        if text.startswith(("//", "/*"), i):
            return "holds a comment (put it in the item's comment)"
        if ch == "#":
            return "holds '#' outside a string literal (stringizing and pasting belong in raw lines)"
        if ch == "\\":
            if not text.startswith("\\\n", i):
                return "holds a backslash outside a string literal that does not end the line"
            i += 2
            continue
        i += 1
    return None


def _c_expr(text: str) -> str | None:
    """A macro's replacement text: printable C tokens; a line break only as a ``\\`` continuation."""
    if text.endswith("\\"):
        return "ends with a backslash"
    bad = text_problem(text.replace("\\\n", " "))
    return bad or _c_literals(text)


def _c_condition(text: str) -> str | None:
    """A ``branches`` condition: ``if``/``elif`` + one-line C expression, ``ifdef``/``ifndef`` + macro, ``else``."""
    if text == "else":
        return None
    word, _, rest = text.partition(" ")
    if word in ("ifdef", "ifndef"):
        return None if _C_IDENT.fullmatch(rest) else f"'{word}' needs one macro name"
    if word not in ("if", "elif") or not rest.strip():
        return "is not 'if EXPR', 'elif EXPR', 'ifdef NAME', 'ifndef NAME' or 'else'"
    return _c_expr(rest) or ("spans lines" if "\n" in rest else None)


def _c_raw(text: str) -> str | None:
    """A raw config.h block: printable lines of C; directives only #define/#undef/#error/#warning/#pragma;
    the last line does not end in a backslash (it would swallow the next generated line)."""
    if len(text) > MAX_LEN:
        return f"longer than {MAX_LEN} characters"
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        bad = text_problem(line)
        if bad:
            return f"line {number} {bad}"
        stripped = line.lstrip(" \t")
        if stripped.startswith("#"):
            word = re.match(r"#\s*([A-Za-z_]*)", stripped)
            name = word.group(1) if word else ""
            if name == "pragma" and stripped.split() != ["#pragma", "once"]:
                return f"line {number} is a #pragma other than '#pragma once'"
            if name not in _RAW_DIRECTIVES:
                return (f"line {number} is a #{name} directive; use an 'include' or 'branches' item"
                        if name in ("include", "include_next", "import", "if", "ifdef", "ifndef", "elif", "else",
                                    "endif", "elifdef", "elifndef")
                        else f"line {number} is a #{name} directive")
    if lines[-1].endswith("\\"):
        return "ends with a backslash"
    if _opens_comment(text):
        return "leaves a /* comment open (it would swallow the lines after it)"
    return None


def _opens_comment(text: str) -> bool:
    """True if ``text`` ends inside a ``/* ... */`` comment (string and character literals skipped)."""
    i, n = 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return True
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] not in (text[i], "\n"):
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return False


def _c_include(text: str) -> str | None:
    """``<dir/name.h>`` or ``"dir/name.h"`` (relative, no ``..``), optionally followed by a comment as the
    importer keeps it (``"bsp.h"  // board support``). A quoted name may start with up to two ``../``: a
    board dir's header reaching its siblings (``"../common/board.h"``), which stays inside the firmware's
    ``main/`` from any board dir (one or two levels under ``main/boards``)."""
    m = _C_INCLUDE.fullmatch(text)
    if m is None:
        return "does not have the allowed form"
    return _endif_tail(m.group(2)) if m.group(2) else None


def _c_macro(text: str) -> str | None:
    """A name ``#define`` may define: a C identifier, not ``defined``/``_Pragma`` nor reserved (``__`` first)."""
    if not _C_IDENT.fullmatch(text):
        return "does not have the allowed form"
    if text in ("defined", "_Pragma") or text.startswith("__"):
        return "is reserved to the preprocessor"
    return None


def _c_params(text: str) -> str | None:
    if not _C_PARAMS.fullmatch(text):
        return "does not have the allowed form"
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    bad = next((n for n in names if _c_macro(n)), None)
    if bad:
        return f"parameter '{bad}' is reserved to the preprocessor"
    return "repeats a parameter" if len(set(names)) != len(names) else None


# Words esp-idf-kconfig's parser reads as keywords where a symbol name must stand (`config if` fails to parse:
# "missing or bad symbol name"); found by asking its Kconfig() of each of kconfiglib's keywords.
KCONFIG_KEYWORDS = ("allnoconfig_y", "bool", "boolean", "choice", "comment", "config", "default", "defconfig_list",
                    "depends", "endchoice", "endif", "endmenu", "env", "grsource", "gsource", "help", "hex", "if",
                    "imply", "int", "mainmenu", "menu", "menuconfig", "on", "option", "optional", "orsource",
                    "osource", "prompt", "range", "rsource", "select", "source", "string", "visible", "warning")


# A symbol's schema pattern: the form, minus the constants y/n and the keywords (what _kconfig_symbol refuses).
_SYMBOL_SCHEMA = rf"(?!(?:y|n|{'|'.join(KCONFIG_KEYWORDS)})$)" + _KCONFIG_SYMBOL.pattern


def _kconfig_symbol(text: str) -> str | None:
    if not _KCONFIG_SYMBOL.fullmatch(text):
        return "does not have the allowed form"
    if text in ("y", "n"):
        return "is a Kconfig constant, not a symbol"
    return "is a Kconfig keyword, not a symbol" if text in KCONFIG_KEYWORDS else None


def _pattern(rx: re.Pattern[str]) -> Callable[[str], str | None]:
    return lambda text: None if rx.fullmatch(text) else "does not have the allowed form"


def _cmake_arg(text: str) -> str | None:
    if _CMAKE_UNQUOTED.fullmatch(text) or _CMAKE_REFERENCE.fullmatch(text):
        return None
    if _CMAKE_QUOTED.fullmatch(text):
        return text_problem(text)
    return "does not have the allowed form"


def _cmake_condition(text: str) -> str | None:
    """An ``if()`` condition: words, "quoted strings" (no '$', '\\', ';'), balanced parentheses, one line."""
    pos, depth = 0, 0
    while pos < len(text):
        m = _CMAKE_COND_TOKEN.match(text, pos)
        if m is None:
            return f"holds {text[pos]!r} at offset {pos}"
        token = m.group(0)
        depth += token == "("
        depth -= token == ")"
        if depth < 0:
            return f"closes a parenthesis it did not open at offset {pos}"
        pos = m.end()
    if depth:
        return "leaves a parenthesis open"
    return "is empty" if not text.strip() else None


def _kconfig_expr(text: str) -> str | None:
    if not _KCONFIG_EXPR.fullmatch(text):
        return "does not have the allowed form"
    return "has unbalanced parentheses" if text.count("(") != text.count(")") else None


def _sdk_value(text: str) -> str | None:
    if not _SDK_VALUE.fullmatch(text):
        return "does not have the allowed form"
    return text_problem(text, tabs=False)


def _kconfig_prompt(text: str) -> str | None:
    if not text.strip():
        return "is empty"
    if text != text.strip():
        return "has leading or trailing spaces (Kconfig drops them)"
    if "$(" in text:  # Kconfig expands $(...) in strings, $(shell,...) included, and has no escape for it
        return "holds '$(' (Kconfig would expand it as a macro, even run $(shell,...))"
    return text_problem(text, tabs=False)


# kind -> (checker, the allowed form as a board owner reads it in the error message)
KINDS: dict[str, tuple[Callable[[str], str | None], str]] = {
    "c_ident": (_pattern(_C_IDENT), "a C identifier ([A-Za-z_][A-Za-z0-9_]*)"),
    "c_macro": (_c_macro, "a macro name ([A-Za-z_][A-Za-z0-9_]*, not 'defined', not starting with '__')"),
    "c_expr": (_c_expr, "C replacement text: printable, literals closed, no comments or '#', a line break only "
                        "as a trailing '\\' continuation"),
    "c_params": (_c_params, "a macro parameter list such as '(a, b)' (distinct names, none starting with '__')"),
    "c_include": (_c_include, "a header as \"dir/name.h\" or <dir/name.h> (letters, digits, _ . + - /; "
                              "no '..' except up to two leading '../' in the quoted form), optionally followed by a comment"),
    "c_condition": (_c_condition, "'if EXPR', 'elif EXPR' (one line of C), 'ifdef NAME', 'ifndef NAME' or 'else'"),
    "c_comment": (_comment, "one printable line (no control or bidi characters), not ending in '\\'"),
    "c_endif_tail": (_endif_tail, "a '// comment' or '/* comment */' on one printable line"),
    "c_raw": (_c_raw, "printable lines of C, comments closed; directives only #define/#undef/#error/#warning/"
                      "#pragma once"),
    "kconfig_symbol": (_kconfig_symbol, "a Kconfig symbol (letters, digits, '_'; not 'y' or 'n')"),
    "board_symbol": (_pattern(_BOARD_SYMBOL), "BOARD_TYPE_<NAME> (letters, digits, '_'; no CONFIG_)"),
    "kconfig_prompt": (_kconfig_prompt, "one printable line of text (no control or bidi characters, no '$(', no "
                                        "spaces at either end)"),
    "cmake_word": (_pattern(_CMAKE_UNQUOTED), "a CMake word: letters, digits and _ . + / : = @ % , * - (no spaces, "
                                              "quotes, parentheses, '$', ';' or '\\')"),
    "cmake_variable": (_pattern(_C_IDENT), "a CMake variable name ([A-Za-z_][A-Za-z0-9_]*)"),
    "cmake_arg": (_cmake_arg, "a CMake argument: letters, digits and _ . + / : = @ % , * - unquoted, one ${NAME}, or a "
                              "\"quoted\" string whose only '$' are ${NAME} references (no '\\', no line break)"),
    "sdkconfig_key": (_kconfig_symbol, "a Kconfig key without CONFIG_ (letters, digits, '_'; not 'y' or 'n')"),
    "sdkconfig_value": (_sdk_value, "y, n, a decimal or 0x hex number, a \"quoted string\" (\\\" and \\\\ "
                                    "escapes, one printable line) or a word of letters, digits and _ . / + : -"),
    "file_name": (_pattern(_FILE_NAME), "a file name: lowercase letters, digits, '_' and '-', not starting with '-' or '_'"),
    "firmware_dir": (_pattern(_FIRMWARE_DIR), "a directory name: letters, digits, '_', '.' and '-', starting with a "
                                              "letter or digit"),
    "dir_name": (_pattern(_DIR_NAME), "a board file name: lowercase letters, digits, '_', '.' and '-', starting "
                                      "with a letter or digit"),
    "variant_name": (_pattern(_VARIANT_NAME), "lowercase letters, digits, '.' and '-', starting with a letter or "
                                              "digit"),
    "legacy_name": (_pattern(_LEGACY_NAME), "lowercase letters, digits, '.', '_' and '-', starting with a letter "
                                            "or digit"),
    "manufacturer": (_pattern(_MANUFACTURER), "lowercase letters, digits and '-', starting with a letter or digit"),
    "commit_id": (_pattern(_COMMIT_ID), "a full git commit id: 40 lowercase hexadecimal digits"),
    "version": (_pattern(_VERSION), "a version: letters, digits and . + _ -, starting with a letter or digit"),
    "locale_dir": (_pattern(_LOCALE_DIR), "a locale directory name such as zh-CN (letters, digits, '_', '-')"),
    "kconfig_expr": (_kconfig_expr, "a Kconfig expression on one line: symbols, ( ) ! && || = and quoted "
                                    "strings"),
    "cmake_condition": (_cmake_condition, "a CMake if() condition on one line: words (letters, digits, _ . + -), "
                                          "\"quoted strings\" without '$', '\\' or ';', balanced parentheses"),
    "free_text": (text_problem, "one printable line of text (no control or bidi characters)"),
}


def problem(kind: str, text: str) -> str | None:
    """None when ``text`` is valid for ``kind``; else the message: what is wrong and the allowed form."""
    check, form = KINDS[kind]
    if len(text) > MAX_LEN:
        return f"longer than {MAX_LEN} characters; expected {form}"
    bad = check(text)
    return None if bad is None else f"{bad}; expected {form}"


def kconfig_quote(text: str) -> str:
    """``text`` as the body of a Kconfig double-quoted string (backslash and quote escaped)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


# The kinds as JSON Schema ``pattern``s (ECMA-262 and Python ``re`` alike), for the board-file schema editors
# validate against. Characters ``text_problem`` refuses, as one character class: the C0/C1 controls, line and
# paragraph separators, the format characters of the BMP, surrogates and private use. Exact for those; characters
# outside the BMP or unassigned in Python's Unicode version are left to the loader.
_UNPRINTABLE = (r"\x00-\x08\x0a-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
                r"\u200b-\u200f\u2028-\u202e\u2060-\u206f\ud800-\uf8ff\ufeff\ufff9-\ufffb")
_PRINTABLE = f"[^{_UNPRINTABLE}]"
_PRINTABLE_NO_TAB = f"[^\\t{_UNPRINTABLE}]"
# (``"`` unescaped: ECMA-262's unicode mode refuses ``\"``.)
_SDK_VALUE_SCHEMA = _SDK_VALUE.pattern.replace('\\"', '"').replace('[^"\\\\]', f'[^"\\\\\\t{_UNPRINTABLE}]')
_CMAKE_ARG_SCHEMA = "|".join((_CMAKE_UNQUOTED.pattern, _CMAKE_REFERENCE.pattern, _CMAKE_QUOTED.pattern.replace(
    '\\"', '"').replace('[^"\\\\$]', f'[^"\\\\${_UNPRINTABLE}]')))
_ENDIF_TAIL = rf"(?!.*\\\s*$)(?={_PRINTABLE}*$(?!\n))\s*(?://.*|/\*(?:(?!\*/).)*\*/)?\s*"
_SCHEMA_BODIES: dict[str, str] = {
    **{kind: rx.pattern for kind, rx in (
        ("c_ident", _C_IDENT), ("board_symbol", _BOARD_SYMBOL), ("cmake_word", _CMAKE_UNQUOTED),
        ("cmake_variable", _C_IDENT), ("file_name", _FILE_NAME), ("firmware_dir", _FIRMWARE_DIR),
        ("dir_name", _DIR_NAME), ("variant_name", _VARIANT_NAME), ("legacy_name", _LEGACY_NAME),
        ("manufacturer", _MANUFACTURER), ("commit_id", _COMMIT_ID), ("version", _VERSION),
        ("locale_dir", _LOCALE_DIR))},
    "c_macro": r"(?!defined$|_Pragma$|__)" + _C_IDENT.pattern,
    "kconfig_symbol": _SYMBOL_SCHEMA,
    "sdkconfig_key": _SYMBOL_SCHEMA,
    "sdkconfig_value": _SDK_VALUE_SCHEMA,
    "cmake_arg": _CMAKE_ARG_SCHEMA,
    "free_text": f"{_PRINTABLE}*",
    "c_comment": rf"(?!.*\\\s*$){_PRINTABLE}*",
    "c_endif_tail": _ENDIF_TAIL,
    "kconfig_prompt": rf"(?!\s)(?!.*\$\(){_PRINTABLE_NO_TAB}+(?<!\s)",
    "c_include": rf"(?:<{_HEADER}>|\"(?:\.\./){{0,2}}{_HEADER}\")(?:[ \t]{_ENDIF_TAIL})?".replace('\\"', '"'),
    # Approximations: these kinds also scan C or Kconfig syntax, which the loader does and no pattern can.
    "c_params": _C_PARAMS.pattern,
    "c_condition": rf"(?:if|elif) {_PRINTABLE}+|ifdef {_C_IDENT.pattern}|ifndef {_C_IDENT.pattern}|else",
    "kconfig_expr": _KCONFIG_EXPR.pattern,
}
# Kinds whose schema pattern says exactly what :func:`problem` says (within the characters above).
EXACT_SCHEMA_KINDS = frozenset(_SCHEMA_BODIES) - {"c_params", "c_condition", "kconfig_expr"}


def schema_pattern(kind: str) -> str | None:
    """``kind`` as an anchored JSON Schema pattern, or None when no pattern describes it (C text, raw blocks).

    Anchored with ``$(?!\\n)``: Python's ``$`` (which ``jsonschema`` uses) also matches before a final newline."""
    body = _SCHEMA_BODIES.get(kind)
    return None if body is None else f"^(?:{body})$(?!\\n)"
