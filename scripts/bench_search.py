"""search_files and find_files over a 5,000-file tree, against `grep -rn` on the same tree.

The tree is Python-ish source in nested packages (about 70 lines a file), plus what the
tools must skip: a `.gitignore` that ignores `build/` and `*.log`, with a build folder
and log files under it, and a `.venv`. grep is given the same skips
(`--exclude-dir`, `--exclude`) so both read the same files; each pattern's matching
lines are counted by both and must agree. Times are medians over repetitions,
interleaved, in one run.

    python scripts/bench_search.py [--quick] [--dir FOLDER] [--files N]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
from pathlib import Path

from benchlib import header, median, parse_args, scratch, table, timed, verdict

from localagent.tools import ToolContext, ToolResult, execute

PATTERNS = [r"TODO", r"def [a-z_0-9]+_handler\(", r"no_such_name_anywhere"]
GREP_EXCLUDES = ["--exclude-dir=.venv", "--exclude-dir=build", "--exclude=*.log"]
TARGET_SECONDS = 5.0  # half the default deadline: a search of such a tree is never cut
WORDS = ["order", "stock", "user", "price", "cart", "report", "event", "queue", "cache"]


def module_text(rng: random.Random, index: int) -> str:
    """About 70 lines of plausible Python: imports, a class, functions, comments."""
    noun = rng.choice(WORDS)
    lines = [f'"""Module {index}: {noun} handling."""', "", "import os", "import json", ""]
    lines += [
        f"class {noun.title()}Store{index}:",
        "    def __init__(self):",
        "        self.items = {}",
    ]
    for k in range(8):
        verb = rng.choice(WORDS)
        suffix = "_handler" if k == 0 and index % 3 == 0 else ""
        lines += ["", f"def {verb}_{k}{suffix}(value, limit={k}):"]
        lines += [f"    # TODO: check {verb} limits" if rng.random() < 0.1 else "    total = 0"]
        lines += ["    for item in range(limit):", f"        total += item * {k}"]
        lines += [f"    return json.dumps({{'{verb}': value, 'total': total}})"]
    return "\n".join(lines) + "\n"


def build_tree(root: Path, files: int) -> None:
    rng = random.Random(1)
    width = max(1, round(files ** (1 / 3)))
    for index in range(files):
        a, b = index // (width * width), (index // width) % width
        path = root / f"pkg{a}" / f"sub{b}" / f"mod_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_text(rng, index))
    (root / ".gitignore").write_text("build/\n*.log\n")
    for index in range(files // 10):  # skipped: ignored folder, ignored files, a venv
        for folder in ("build", ".venv/lib/site-packages"):
            target = root / folder / f"gen_{index}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(module_text(rng, index))
        (root / f"pkg{index % width}" / f"run_{index}.log").write_text("TODO\n" * 50)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")


def tool_call(root: Path, name: str, args: dict[str, object]) -> ToolResult:
    # A deadline far past the target, so the time measured is the whole search.
    result = execute(ToolContext(root, search_seconds=120.0), name, args)
    assert result.ok, result.text
    return result


def grep_count(root: Path, pattern: str) -> int:
    done = subprocess.run(
        ["grep", "-rnE", *GREP_EXCLUDES, pattern, "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return len(done.stdout.splitlines())


def tool_count(result: ToolResult) -> int:
    last = next(line for line in result.text.splitlines() if "searched" in line)
    return 0 if last.startswith("no matches") else int(last.split(" ", 1)[0])


def main() -> int:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--files", type=int, default=None, help="files in the tree")

    args = parse_args("search_files against grep -rn on one tree", extra)
    files = args.files or (500 if args.quick else 5000)
    repeats = 3 if args.quick else 5
    if shutil.which("grep") is None:
        print("FAIL: grep is not on PATH; nothing to compare against")
        return 1
    with scratch(args.dir) as base:
        header(f"search_files over {files} files, against grep -rn", base)
        root = base / "tree"
        build_tree(root, files)
        rows, checks = [], []
        for pattern in PATTERNS:
            ours, theirs = [], []
            for _ in range(repeats):  # interleaved, so both see the same machine
                ours.append(
                    timed(lambda p=pattern: tool_call(root, "search_files", {"pattern": p}))
                )
                theirs.append(timed(lambda p=pattern: grep_count(root, p)))
            found = tool_count(tool_call(root, "search_files", {"pattern": pattern}))
            expected = grep_count(root, pattern)
            ratio = median(ours) / median(theirs)
            rows.append(
                [
                    f"`{pattern}`",
                    found,
                    expected,
                    f"{median(ours):.3f}",
                    f"{median(theirs):.3f}",
                    f"{ratio:.1f}x",
                ]
            )
            checks.append((found == expected, f"{pattern!r}: {found} lines, grep {expected}"))
            checks.append(
                (median(ours) < TARGET_SECONDS, f"{median(ours):.2f} s < {TARGET_SECONDS:g} s")
            )
        listing = median(
            [timed(lambda: tool_call(root, "find_files", {"glob": "*.py"})) for _ in range(repeats)]
        )
        headers = ["pattern", "lines", "grep lines", "search_files s", "grep -rn s", "ratio"]
        print(table(headers, rows))
        print()
        print(f"find_files('*.py') over the same tree: {listing:.3f} s (median of {repeats})")
        print()
        return 0 if verdict(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
