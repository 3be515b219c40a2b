"""The one CMake reader (xzbuild.core.cmake): expected values written by hand from cmake-language(7)."""

from __future__ import annotations

from pathlib import Path

from xzbuild.core.cmake import Argument, Branch, read


def only(text: str):
    """The one statement of ``text`` (asserting it reads without problems)."""
    script = read(text)
    assert script.problems == ()
    assert len(script.statements) == 1
    return script.statements[0]


def test_unquoted_arguments_and_name_case() -> None:
    statement = only("SET(A b;c ${D}/e)\n")
    assert statement.command.name == "SET" and statement.word == "set"
    assert statement.command.args == (Argument("A", "unquoted", 1), Argument("b;c", "unquoted", 1),
                                      Argument("${D}/e", "unquoted", 1))
    assert statement.line == statement.end_line == 1
    assert statement.conditions == () and statement.block is None


def test_multi_line_command_keeps_lines_and_drops_comments() -> None:
    text = ('# Define sources\n'
            'set(SOURCES "a.cc"\n'
            '            "b c.cc"   # the one with a space\n'
            '            d.cc)\n'
            'list(APPEND SOURCES "e.cc")\n')
    first, second = read(text).statements
    assert first.command.values == ("SOURCES", "a.cc", "b c.cc", "d.cc")
    assert [a.kind for a in first.command.args] == ["unquoted", "quoted", "quoted", "unquoted"]
    assert [a.line for a in first.command.args] == [2, 2, 3, 4]
    assert (first.line, first.end_line) == (2, 4)
    assert first.code == 'set(SOURCES "a.cc" "b c.cc" d.cc)'
    assert first.command.inner == 'SOURCES "a.cc" "b c.cc" d.cc'
    assert (second.line, second.command.values) == (5, ("APPEND", "SOURCES", "e.cc"))


def test_quoted_argument_escapes_hash_and_continuation() -> None:
    statement = only('message("a#b \\"q\\" x\\\ny" "${V}")\n')
    # '#' inside quotes is text; an escaped quote does not end the argument; backslash-newline joins lines.
    assert statement.command.values == ('a#b \\"q\\" xy', "${V}")
    assert statement.end_line == 2


def test_bracket_arguments() -> None:
    statement = only("set(X [[a;b \"c\"]] [=[has ]] inside]=] [[\nfirst newline dropped]])\n")
    assert statement.command.args[1:] == (Argument('a;b "c"', "bracket", 1),
                                         Argument("has ]] inside", "bracket", 1),
                                         Argument("first newline dropped", "bracket", 1))
    assert statement.command.args[1].variables == ()


def test_bracket_comment_and_line_comment() -> None:
    text = ("#[[ set(NOT a command)\n"
            "    still comment ]] set(Y 1) # set(Z 2)\n"
            "#[==[ ]] ]=] ]==]\n"
            "set(W \"#not a comment\" #[[inline]] x)\n")
    first, second = read(text).statements
    assert (first.line, first.code, first.command.values) == (2, "set(Y 1)", ("Y", "1"))
    assert (second.line, second.command.values) == (4, ("W", "#not a comment", "x"))
    assert second.code == 'set(W "#not a comment"  x)'  # the comment goes, the spaces around it stay


def test_nested_parentheses_are_arguments() -> None:
    statement = read('if(NOT (A OR B) AND "C")\nendif()\n').statements[0]
    assert statement.command.values == ("NOT", "(", "A", "OR", "B", ")", "AND", "C")
    assert statement.command.inner == 'NOT (A OR B) AND "C"'


def test_variable_references() -> None:
    arg = Argument("${CMAKE_CURRENT_SOURCE_DIR}/x/${a_${b}}.cc", "unquoted", 1)
    assert arg.variables == ("CMAKE_CURRENT_SOURCE_DIR", "b", "a_")
    assert Argument("${X}", "bracket", 1).variables == ()


def test_if_nesting_gives_each_statement_its_branches() -> None:
    text = ("if(A)\n"          # 1
            "  set(X 1)\n"     # 2
            "elseif(B)\n"      # 3
            "  if (C)\n"       # 4
            "    set(Y 2)\n"   # 5
            "  endif()\n"      # 6
            "else()\n"         # 7
            "  set(Z 3)\n"     # 8
            "ENDIF()\n"        # 9
            "set(T 4)\n")      # 10
    script = read(text)
    assert script.balanced and script.problems == ()
    s = {st.line: st for st in script.statements}
    heads = lambda branch: [h.code for h in branch.heads] if branch else []  # noqa: E731
    assert [heads(b) for b in s[2].conditions] == [["if(A)"]]
    assert s[3].conditions == () and heads(s[3].block) == ["if(A)", "elseif(B)"]
    assert [heads(b) for b in s[4].conditions] == [["if(A)", "elseif(B)"]] and heads(s[4].block) == ["if (C)"]
    assert [b.head.code for b in s[5].conditions] == ["elseif(B)", "if (C)"]
    assert s[5].conditions[1].head.inner == "C"
    assert [b.head.code for b in s[6].conditions] == ["elseif(B)"] and heads(s[6].block) == ["if (C)"]
    assert [heads(b) for b in s[8].conditions] == [["if(A)", "elseif(B)", "else()"]]
    assert s[9].word == "endif" and s[9].conditions == () and heads(s[9].block) == ["if(A)", "elseif(B)", "else()"]
    assert s[10].conditions == () and s[10].block is None


def test_unbalanced_blocks_are_problems_not_errors() -> None:
    stray = read("set(A 1)\nendif()\n")
    assert not stray.balanced
    assert [(p.line, p.message) for p in stray.problems] == [(2, "endif() without an open if()")]
    unclosed = read("if(A)\n  set(B 1)\n")
    assert not unclosed.balanced
    assert [(p.line, p.message) for p in unclosed.problems] == [(1, "if() without endif()")]
    assert [b.head.code for b in unclosed.statements[1].conditions] == ["if(A)"]


def test_syntax_problems_keep_reading() -> None:
    script = read('hello world\nset(A "b)\n')
    assert [(p.line, p.message) for p in script.problems] == [
        (1, "expected a command: name(arguments)"), (2, "quoted argument not closed"),
        (2, "command not closed: missing ')'")]
    assert script.statements[0].command.values[0] == "A"
    unclosed = read("set(A b\n\n")
    assert [(p.line, p.message) for p in unclosed.problems] == [(1, "command not closed: missing ')'")]
    assert unclosed.statements[0].command.values == ("A", "b")


def test_upstream_main_cmakelists(upstream_at_pin: Path) -> None:
    text = (upstream_at_pin / "main" / "CMakeLists.txt").read_text(encoding="utf-8")
    script = read(text)
    assert script.problems == () and script.balanced
    s = {st.line: st for st in script.statements}
    # set(SOURCES "audio/audio_codec.cc" ... "main.cc") over lines 2-43
    assert s[2].word == "set" and s[2].end_line == 43
    assert s[2].command.values[:2] == ("SOURCES", "audio/audio_codec.cc") and s[2].command.values[-1] == "main.cc"
    assert s[45].command.values[:3] == ("INCLUDE_DIRS", ".", "display")
    # if(CONFIG_XIAOZHI_NETWORK_ETHERNET) list(APPEND SOURCES "boards/common/ethernet_board.cc") endif()
    assert s[67].command.values == ("APPEND", "SOURCES", "boards/common/ethernet_board.cc")
    assert [b.head.inner for b in s[67].conditions] == ["CONFIG_XIAOZHI_NETWORK_ETHERNET"]
    assert s[68].word == "endif" and [h.line for h in (s[68].block or Branch(())).heads] == [66]
    # the board chain starts at line 93
    assert s[93].word == "if" and s[93].command.inner == "CONFIG_BOARD_TYPE_BREAD_COMPACT_WIFI"
    # escaped quotes inside a quoted regex, inside if(EXISTS "${BOARD_CONFIG_FILE}")
    regex = s[852]
    assert regex.command.values[:2] == ("REGEX", "MATCH")
    assert regex.command.args[2].value == '\\"type\\"[ \\t\\r\\n]*:[ \\t\\r\\n]*\\"([^\\"]+)\\"'
    assert regex.command.values[3:] == ("BOARD_TYPE_MATCH", "${BOARD_CONFIG_JSON}")
    assert [b.head.code for b in regex.conditions] == ['if(EXISTS "${BOARD_CONFIG_FILE}")']
    # `if (` with a space before the parenthesis, closed by the file's last statement
    assert s[1330].word == "if" and s[1330].command.inner == '"${size}" AND "${offset}"'
    last = script.statements[-1]
    assert last.word == "endif" and [h.line for h in (last.block or Branch(())).heads] == [1330, 1357]
