"""search_files and find_files through the real registry, and once through the CLI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import call, cli_env, done, plan_rule, records, run_cli

from localagent.models.fake import FakeServer
from localagent.tools import ToolContext, ToolResult, execute

NO_LINKS = "this account cannot create symbolic links"


def make(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def link(path: Path, target: Path) -> None:
    try:
        path.symlink_to(target, target_is_directory=target.is_dir())
    except OSError:
        pytest.skip(NO_LINKS)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def search(root: Path, **args: object) -> ToolResult:
    return execute(ToolContext(root), "search_files", args)


def find(root: Path, **args: object) -> ToolResult:
    return execute(ToolContext(root), "find_files", args)


def hits(result: ToolResult) -> list[str]:
    """The `path:line: text` lines of a result."""
    return [line for line in result.text.splitlines() if re.match(r"[^ ]+:\d+: ", line)]


def listed(result: ToolResult) -> list[str]:
    """The paths find_files listed (lines without spaces)."""
    return [line for line in result.text.splitlines() if line and " " not in line]


PROJECT = {
    "app.py": "import util\n\ndef main():\n    return util.greet('x')\n",
    "pkg/util.py": "# helpers\n\n\ndef greet(name):\n    return f'hello {name}'\n",
    "pkg/sub/deep.py": "def greet_all():\n    pass\n",
    "pkg.py": "def greeter():\n    pass\n",
    "README.md": "Call greet() to greet.\n",
}


# ------------------------------------------------------------------ search_files


def test_results_are_path_line_text_sorted_with_a_count(root: Path) -> None:
    make(root, PROJECT)
    result = search(root, pattern=r"def greet\w*\(")
    assert result.ok and result.facts == {"searched": ["."]}
    assert hits(result) == [
        "pkg/sub/deep.py:1: def greet_all():",
        "pkg/util.py:4: def greet(name):",
        "pkg.py:1: def greeter():",
    ]
    assert result.text.splitlines()[-1] == "3 matches in 3 files (5 files searched)"


def test_one_line_per_matching_line_and_anchors_work_per_line(root: Path) -> None:
    make(root, {"a.txt": "x x x\nno\n  x\n"})
    assert hits(search(root, pattern="x")) == ["a.txt:1: x x x", "a.txt:3:   x"]
    assert hits(search(root, pattern=r"^\s+x$")) == ["a.txt:3:   x"]
    assert hits(search(root, pattern="^")) == ["a.txt:1: x x x", "a.txt:2: no", "a.txt:3:   x"]


def test_an_invalid_regex_is_searched_as_plain_text_and_says_so(root: Path) -> None:
    make(root, {"a.py": "call(x\nfoo(\n", "b.py": "foo\n"})
    result = search(root, pattern="foo(")
    assert hits(result) == ["a.py:2: foo("]
    assert "not a valid regular expression" in result.text and "plain text" in result.text


def test_a_pattern_that_expands_too_much_is_refused(root: Path) -> None:
    make(root, {"a.py": "x\n"})
    started = time.monotonic()
    result = search(root, pattern="(?:(?:x{1000}){1000}){1000}")
    assert not result.ok and "repeat" in result.text
    assert time.monotonic() - started < 2
    assert search(root, pattern="x{0,100000}").ok  # optional copies are not expanded


def test_empty_and_huge_patterns_are_clear_errors(root: Path) -> None:
    assert not search(root, pattern="").ok
    result = search(root, pattern="a" * 5000)
    assert not result.ok and "pattern is 5000 characters" in result.text


def test_max_results_caps_and_the_total_is_still_counted(root: Path) -> None:
    make(root, {f"f{i:02}.txt": "hit\nhit\n" for i in range(15)})
    result = search(root, pattern="hit", max_results=5)
    assert hits(result) == [f"f0{i // 2}.txt:{i % 2 + 1}: hit" for i in range(5)]
    assert "30 matches in 15 files" in result.text and "showing the first 5" in result.text
    assert len(hits(search(root, pattern="hit", max_results=0))) == 1
    assert len(hits(search(root, pattern="hit", max_results=10**9))) == 30


def test_results_stop_before_the_output_limit(root: Path) -> None:
    make(root, {f"f{i:03}.txt": "hit " + "y" * 150 + "\n" for i in range(100)})
    result = execute(ToolContext(root, output_limit=3000), "search_files", {"pattern": "hit"})
    assert len(result.text) <= 3000 and "characters cut" not in result.text
    assert "100 matches in 100 files" in result.text and "showing the first" in result.text


def test_long_lines_are_cut_around_the_match(root: Path) -> None:
    make(root, {"min.js": "a" * 5000 + "NEEDLE" + "b" * 5000 + "\n"})
    [line] = hits(search(root, pattern="NEEDLE"))
    assert "NEEDLE" in line and len(line) < 300 and line.startswith("min.js:1: …")


def test_glob_and_path_narrow_the_search(root: Path) -> None:
    make(root, PROJECT)
    assert [h.split(":")[0] for h in hits(search(root, pattern="greet", glob="*.md"))] == [
        "README.md"
    ]
    in_pkg = hits(search(root, pattern="greet", path="pkg", glob="sub/**/*.py"))
    assert in_pkg == ["pkg/sub/deep.py:1: def greet_all():"]
    one_file = hits(search(root, pattern="greet", path="pkg\\util.py"))
    assert one_file == ["pkg/util.py:4: def greet(name):"]


def test_caches_environments_git_and_journals_are_skipped(root: Path) -> None:
    make(
        root,
        {
            "kept.py": "SECRET = 1\n",
            ".git/config": "SECRET\n",
            ".venv/lib/x.py": "SECRET\n",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/site.py": "SECRET\n",
            "node_modules/m/index.js": "SECRET\n",
            "__pycache__/a.txt": "SECRET\n",
            ".agent_context/history.jsonl": "SECRET\n",
            "sub/.Agent_Context./x.txt": "SECRET\n",
        },
    )
    assert [h.split(":")[0] for h in hits(search(root, pattern="SECRET"))] == ["kept.py"]
    assert listed(find(root, glob="*")) == ["kept.py"]


def test_binary_and_large_files_are_skipped_and_counted(root: Path) -> None:
    make(root, {"a.txt": "word\n", "b.bin": b"word\x00\x01", "big.txt": "word\n" * 300_000})
    result = search(root, pattern="word")
    assert hits(result) == ["a.txt:1: word"]
    assert "1 binary" in result.text and "1 over 1 MB" in result.text


def test_non_utf8_text_is_searched_with_replacement(root: Path) -> None:
    make(root, {"latin.txt": "caf\xe9 = 1\n".encode("latin-1"), "crlf.txt": b"one\r\ntwo\r\n"})
    assert hits(search(root, pattern="caf")) == ["latin.txt:1: caf\ufffd = 1"]
    assert hits(search(root, pattern="two$")) == ["crlf.txt:2: two"]


def test_no_match_says_what_was_searched(root: Path) -> None:
    make(root, PROJECT)
    result = search(root, pattern="nowhere", glob="*.py")
    assert result.ok and "no matches" in result.text and "4 files searched" in result.text


# ------------------------------------------------------------------ time bounds


def test_a_catastrophic_regex_is_bounded_in_time(root: Path) -> None:
    make(root, {f"f{i}.txt": ("a" * 3000 + "!\n") * 3 for i in range(5)})
    ctx = ToolContext(root, search_seconds=1.0)
    started = time.monotonic()
    result = execute(ctx, "search_files", {"pattern": r"(a|aa)+$"})
    elapsed = time.monotonic() - started
    assert result.ok and elapsed < 3.0, elapsed
    assert "stopped at the 1 s time limit" in result.text and "partial" in result.text


def test_nested_quantifiers_on_a_long_line_of_as_keep_what_was_found(root: Path) -> None:
    make(root, {"a.txt": "a" * 50_000 + "\n", "b.txt": "a" * 50_000 + "b\n"})
    ctx = ToolContext(root, search_seconds=1.5)
    started = time.monotonic()
    result = execute(ctx, "search_files", {"pattern": r"(a+)+$"})
    elapsed = time.monotonic() - started
    assert elapsed < 3.5, elapsed
    assert hits(result) == ["a.txt:1: " + "a" * 200 + "…"]
    assert "1 match in 1 file" in result.text and "1.5 s time limit" in result.text


def test_a_stop_request_ends_the_walk(root: Path) -> None:
    make(root, {f"f{i}.txt": "x\n" for i in range(20)})
    ctx = ToolContext(root, cancelled=lambda: True)
    result = execute(ctx, "search_files", {"pattern": "x"})
    assert result.ok and "stopped" in result.text and "partial" in result.text


# ------------------------------------------------------------------ .gitignore


def test_gitignore_root_and_nested_negation_anchoring_and_folders(root: Path) -> None:
    make(
        root,
        {
            ".gitignore": "*.log\n!keep.log\n/top.txt\nbuild/\ndocs/*.md\n# note.txt\n",
            "a.log": "",
            "keep.log": "",
            "top.txt": "",
            "sub/top.txt": "",
            "build/out.txt": "",
            "sub/build": "a file named build is not a folder\n",
            "docs/a.md": "",
            "docs/x/b.md": "",
            "note.txt": "",
            "src/.gitignore": "gen/\n!important.log\n*.tmp\n",
            "src/gen/g.py": "",
            "src/important.log": "",
            "src/x.tmp": "",
            "src/ok.py": "",
            "src/deeper/y.tmp": "",
        },
    )
    assert listed(find(root, glob="*")) == [
        ".gitignore",
        "docs/x/b.md",
        "keep.log",
        "note.txt",
        "src/.gitignore",
        "src/important.log",
        "src/ok.py",
        "sub/build",
        "sub/top.txt",
    ]


def test_a_file_in_an_ignored_folder_cannot_be_reincluded(root: Path) -> None:
    make(root, {".gitignore": "out/\n!out/keep.txt\n", "out/keep.txt": "", "a.txt": ""})
    assert listed(find(root, glob="*.txt")) == ["a.txt"]
    # Asked for by path, an ignored folder is searched: only what is below it is judged.
    assert listed(find(root, glob="*.txt", path="out")) == ["out/keep.txt"]


TRICKY_IGNORES = {
    ".gitignore": (
        "*.o\n**/logs/**\n/root_only.txt\ndoc/**/*.pdf\n!doc/keep/*.pdf\n"
        "[Tt]emp*\nfoo?.c\n\\#hash.txt\ntrailing.txt   \n*.a\n!lib.a\nmid/dir/\n"
    ),
    "x.o": "",
    "y/z.o": "",
    "logs/a.txt": "",
    "deep/logs/b.txt": "",
    "root_only.txt": "",
    "deep/root_only.txt": "",
    "doc/a.pdf": "",
    "doc/x/y/b.pdf": "",
    "doc/keep/c.pdf": "",
    "Temp1.txt": "",
    "temp2.txt": "",
    "foo1.c": "",
    "foo12.c": "",
    "#hash.txt": "",
    "trailing.txt": "",
    "x.a": "",
    "lib.a": "",
    "mid/dir/f.txt": "",
    "other/mid/dir/g.txt": "",
    "sub/.gitignore": "!x.o\n/local.txt\n*.txt\n!keep.txt\n",
    "sub/x.o": "",
    "sub/local.txt": "",
    "sub/keep.txt": "",
    "sub/inner/local.txt": "",
    "sub/inner/keep.txt": "",
}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("user_file", ["configured", "xdg"])
def test_ignores_agree_with_git(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_file: str
) -> None:
    """The .gitignore files, the repository's .git/info/exclude and the user's excludes
    file (named by core.excludesFile, or git's default under XDG_CONFIG_HOME), with the
    precedence git gives them."""
    make(root, TRICKY_IGNORES)
    make(root, {"a.tmp": "", "keep.tmp": "", "b.secret": "", "sub/c.secret": "", "d.log": ""})
    config, xdg = tmp_path / "gitconfig", tmp_path / "xdg"
    user_ignores = tmp_path / "my-ignores" if user_file == "configured" else xdg / "git/ignore"
    user_ignores.parent.mkdir(parents=True, exist_ok=True)
    user_ignores.write_text("*.tmp\n*.secret\n!d.log\n")
    if user_file == "configured":
        config.write_text(f'[user]\n\tname = x\n[core]\n\texcludesFile = "{user_ignores}"\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git/info/exclude").write_text("# the repository's own\n!keep.tmp\n*.log\n")
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert {"keep.tmp", "a.tmp", "b.secret", "d.log"} & set(untracked) == {"keep.tmp"}
    assert listed(find(root, glob="*")) == sorted(untracked, key=lambda p: p.split("/"))
    assert listed(find(root, glob="*.tmp", path="sub")) == []


def test_a_linked_info_folder_is_not_read(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    make(outside, {"exclude": "*.py\n"})
    make(root, {"app.py": "", ".git/HEAD": ""})
    link(root / ".git" / "info", outside)
    assert listed(find(root, glob="*.py")) == ["app.py"]


# ------------------------------------------------------------------ hostile input


def test_globs_and_ignore_lines_with_many_stars_cost_little(root: Path) -> None:
    stars = "*a" * 12 + "*b"
    make(root, {".gitignore": f"{stars}\n**/a/**/a/**/a/**/a/**/b\n", "a" * 200: "x\n"})
    make(root, {"/".join(["a"] * 40) + "/f.txt": "x\n"})
    started = time.monotonic()
    assert len(listed(find(root, glob=stars))) == 0
    assert len(hits(search(root, pattern="x", glob="**/a/**/a/**/a/**/a/**/b"))) == 0
    assert len(hits(search(root, pattern="x"))) == 2
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("path", ["..", "../outside", "/etc", "C:/Windows", "a/../../outside"])
def test_paths_outside_the_workspace_are_refused(root: Path, path: str) -> None:
    make(root.parent, {"outside/secret.txt": "SECRET\n"})
    for result in (search(root, pattern="SECRET", path=path), find(root, glob="*", path=path)):
        assert not result.ok and "outside the workspace" in result.text


def test_an_absolute_path_inside_the_workspace_is_accepted(root: Path) -> None:
    make(root, {"a.txt": "hit\n"})
    assert hits(search(root, pattern="hit", path=str(root))) == ["a.txt:1: hit"]


@pytest.mark.parametrize("path", [".agent_context", "sub/.agent_context", ".AGENT_CONTEXT/x"])
def test_the_journal_is_refused(root: Path, path: str) -> None:
    make(root, {".agent_context/h.jsonl": "x\n", "sub/.agent_context/h.jsonl": "x\n"})
    for result in (search(root, pattern="x", path=path), find(root, glob="*", path=path)):
        assert not result.ok and "journal" in result.text


def test_links_out_are_never_followed(root: Path) -> None:
    make(root.parent, {"outside/secret.txt": "SECRET\n"})
    make(root, {"in.txt": "SECRET inside\n"})
    link(root / "out_dir", root.parent / "outside")
    link(root / "out_file.txt", root.parent / "outside" / "secret.txt")
    link(root / "loop", root)
    result = search(root, pattern="SECRET")
    assert hits(result) == ["in.txt:1: SECRET inside"]
    assert "3 links not followed" in result.text
    assert listed(find(root, glob="*")) == ["in.txt"]
    refused = search(root, pattern="SECRET", path="out_dir")
    assert not refused.ok and "outside the workspace" in refused.text


def test_a_link_cycle_inside_ends(root: Path) -> None:
    make(root, {"a/b/f.txt": "x\n"})
    link(root / "a" / "b" / "up", root / "a")
    link(root / "self", root / "self")
    assert hits(search(root, pattern="x")) == ["a/b/f.txt:1: x"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_in_the_tree_is_never_opened(root: Path) -> None:
    make(root, {"a.txt": "x\n"})
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "pipe.txt")
    results: list[ToolResult] = []
    worker = threading.Thread(
        target=lambda: results.extend(
            [search(root, pattern="x"), search(root, pattern="x", path="pipe.txt")]
        ),
        daemon=True,
    )
    worker.start()
    worker.join(10)
    assert results, "the search blocked on a FIFO"
    assert hits(results[0]) == ["a.txt:1: x"]
    assert not results[1].ok and "not a regular file" in results[1].text


def test_a_missing_path_is_a_clear_error(root: Path) -> None:
    result = search(root, pattern="x", path="nope")
    assert not result.ok and "does not exist" in result.text


# ------------------------------------------------------------------ find_files


def test_find_files_by_name_and_by_path(root: Path) -> None:
    make(root, {**PROJECT, "tests/test_a.py": "", "tests/unit/test_b.py": "", "src/w/x.js": ""})
    assert listed(find(root, glob="*.py")) == [
        "app.py",
        "pkg/sub/deep.py",
        "pkg/util.py",
        "pkg.py",
        "tests/test_a.py",
        "tests/unit/test_b.py",
    ]
    assert listed(find(root, glob="**/test_*.py")) == ["tests/test_a.py", "tests/unit/test_b.py"]
    assert listed(find(root, glob="src/**/*.js")) == ["src/w/x.js"]
    assert listed(find(root, glob="*.py", path="pkg")) == ["pkg/sub/deep.py", "pkg/util.py"]
    result = find(root, glob="*.rs")
    assert result.ok and result.facts == {} and "no files match" in result.text


def test_find_files_caps_the_list(root: Path) -> None:
    make(root, {f"d/f{i:03}.txt": "" for i in range(250)})
    result = find(root, glob="*.txt")
    assert len(listed(result)) == 200
    assert "250 files match" in result.text and "showing the first 200" in result.text


def test_find_files_needs_a_valid_glob(root: Path) -> None:
    result = find(root, glob=" ")
    assert not result.ok and "glob is empty" in result.text
    for result in (find(root, glob="[z-a].py"), search(root, pattern="x", glob="[z-a]")):
        assert not result.ok and "not a valid name pattern" in result.text


# ------------------------------------------------------------------ end to end


@pytest.mark.skipif(sys.platform == "win32", reason="the end-to-end tests run on POSIX")
def test_the_model_searches_and_the_journal_holds_the_result(root: Path) -> None:
    make(root, PROJECT)
    scenario = {
        "rules": [plan_rule(("Find the greeting", ["Find where greet is defined"]))],
        "replies": [
            call("search_files", pattern=r"def greet\(", glob="*.py"),
            done("pkg/util.py defines greet at line 4"),
            # Nothing was changed or run: the first claim gets its one "not accepted yet",
            # the second is accepted as unverified (README, "No-op work is no progress").
            done("pkg/util.py defines greet at line 4"),
        ],
    }
    with FakeServer(scenario) as server:
        goal = "Find where greet is defined"
        result = run_cli(cli_env(server.url), "start", goal, "-w", str(root), "--foreground")
    assert result.returncode == 0, result.stderr
    finished = [r for r in records(root) if r["type"] == "action_finished"]
    [searched] = [r for r in finished if r["tool"] == "search_files"]
    assert searched["ok"] and "pkg/util.py:4: def greet(name):" in searched["result"]
    assert "1 match in 1 file" in searched["result"]
