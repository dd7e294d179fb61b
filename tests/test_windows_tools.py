"""Tools on Windows and POSIX alike: how a command is split, which names a path may use.

These run on every platform: a workspace means the same thing whichever system runs the
agent, so what Windows would read differently is refused everywhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from localagent.tools import ToolContext, canonical_call, command_argv, execute

ARGV_SCRIPT = "import sys\nprint('ran main', sys.argv[1:])\n"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text(ARGV_SCRIPT)
    return ToolContext(root)


# ------------------------------------------------------------ a backslash is a character


def test_a_backslash_in_a_command_runs_the_script_it_names(ctx: ToolContext) -> None:
    result = execute(ctx, "run_cmd", {"cmd": "python src\\main.py"})
    assert result.ok, result.text
    assert "ran main []" in result.text


def test_a_backslash_reaches_the_program_unchanged(ctx: ToolContext) -> None:
    result = execute(ctx, "run_cmd", {"cmd": "python src/main.py a\\b \"c d\" 'e\\f' g\\\\h"})
    assert result.ok, result.text
    assert repr(["a\\b", "c d", "e\\f", "g\\\\h"]) in result.text


def test_the_command_is_split_the_same_way_on_every_platform(ctx: ToolContext) -> None:
    argv = command_argv(ctx, 'python -u src\\main.py "a b\\" tests\\unit')
    assert argv[1:] == ["-u", "src/main.py", "a b\\", "tests\\unit"]


def test_the_canonical_call_keeps_the_backslash() -> None:
    _, values = canonical_call("run_cmd", {"cmd": "python  src\\main.py"})
    assert "src\\main.py" in values["cmd"]
    _, other = canonical_call("run_cmd", {"cmd": "python srcmain.py"})
    assert values != other


# ------------------------------------------------------------ names Windows reads differently

REFUSED_NAMES = [
    ("a:b.txt", "outside the workspace"),
    ("ab:c.txt", "':'"),
    ("notes.py:hidden", "':'"),
    ("dir:x/y.txt", "':'"),
    ("CON", "reserved"),
    ("con.txt", "reserved"),
    ("sub/nul", "reserved"),
    ("CONIN$", "reserved"),
    ("conout$", "reserved"),
    ("Com1.log", "reserved"),
    ("lpt9", "reserved"),
    ("COM\u00b9", "reserved"),
    ("aux .py", "reserved"),
    ("trail.py.", "ends with"),
    ("trail.py ", "ends with"),
    ("dir./x.txt", "ends with"),
    ("dir /x.txt", "ends with"),
    ("...", "ends with"),
]


def entries(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


@pytest.mark.parametrize(("name", "word"), REFUSED_NAMES)
def test_names_windows_reads_differently_are_refused(
    ctx: ToolContext, name: str, word: str
) -> None:
    before = entries(ctx.root)
    written = execute(ctx, "write_file", {"path": name, "content": "x"})
    assert not written.ok and word in written.text, written.text
    assert entries(ctx.root) == before
    read = execute(ctx, "read_file", {"path": name})
    assert not read.ok and word in read.text, read.text


@pytest.mark.parametrize(
    "name",
    ["console.py", "con_fig.py", "nulls.txt", "com10.txt", "lpt.txt", ".hidden", "a..b.txt"],
)
def test_ordinary_names_near_the_reserved_ones_are_written(ctx: ToolContext, name: str) -> None:
    result = execute(ctx, "write_file", {"path": f"sub/{name}", "content": "x"})
    assert result.ok, result.text
    assert (ctx.root / "sub" / name).read_text() == "x"


def test_what_is_written_is_what_is_reported(ctx: ToolContext) -> None:
    result = execute(ctx, "write_file", {"path": "./pkg\\mod.py", "content": "x = 1\n"})
    assert result.ok, result.text
    assert entries(ctx.root) == sorted(["src", "src/main.py", "pkg", "pkg/mod.py"])


def test_a_name_is_refused_before_its_path_is_resolved(ctx: ToolContext) -> None:
    # A link loop makes resolving fail; a refused name must be refused without getting there.
    try:
        os.symlink("loop", ctx.root / "loop")
    except (OSError, NotImplementedError):
        pytest.skip("this account cannot create symbolic links (Wine 8 never can)")
    result = execute(ctx, "write_file", {"path": "loop/CONOUT$", "content": "x"})
    assert not result.ok and "reserved" in result.text, result.text


def test_a_script_name_with_a_stream_is_refused(ctx: ToolContext) -> None:
    result = execute(ctx, "run_cmd", {"cmd": "python src/main.py:evil"})
    assert not result.ok and "':'" in result.text, result.text


def test_an_over_long_path_is_refused_the_same_everywhere(ctx: ToolContext) -> None:
    result = execute(ctx, "read_file", {"path": "abcdefghi/" * 500})
    assert not result.ok and "is 5000 bytes long" in result.text, result.text


def test_pytest_node_ids_with_colons_stay_allowed(ctx: ToolContext) -> None:
    argv = command_argv(ctx, "pytest tests/test_a.py::test_b -q")
    assert argv[-2:] == ["tests/test_a.py::test_b", "-q"]


@pytest.mark.skipif(sys.platform != "win32", reason="a drive letter names another disk on POSIX")
def test_an_absolute_windows_path_inside_the_workspace_is_still_accepted(ctx: ToolContext) -> None:
    result = execute(ctx, "read_file", {"path": str(ctx.root / "src" / "main.py")})
    assert result.ok and "ran main" in result.text, result.text
