"""A version module written as its bare version is written as the line it stands for
(small profile). Qwen2.5-Coder-1.5B's mathx on the CPU (code of 1dab345), verbatim through
the real CLI on the scripted fake server: it wrote mathx/__version__.py as `0.1.0`, told
each time that it did not compile, until the write was blocked; its tests passed later,
and `ruff check` failed on that file until the goal ran out of rounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal
from test_goal_checks_done import GOAL

from localagent.tools.pywrite import mended

VERSION = (
    '{{"name": "write_file", "arguments": {"path": "mathx/__version__.py", "content": "0.1.0"}}}'
)
STEP = "write_file mathx/__version__.py with the version number (e.g., '0.1.0')"


def test_a_bare_version_in_a_version_module_is_written_as_its_assignment(tmp_path: Path) -> None:
    rounds = [{"content": VERSION}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, [STEP])), rounds, LOCALAGENT_MAX_ROUNDS="1")
    (write,) = records_of(tmp_path, "action_finished")
    assert (
        write["ok"]
        and ('; `0.1.0` did not compile, so it was written as `__version__ = "0.1.0"`')
        in write["result"]
    ), write["result"]
    assert (tmp_path / "mathx" / "__version__.py").read_text() == '__version__ = "0.1.0"'
    assert "syntax error" not in write["result"]


@pytest.mark.parametrize(
    ("name", "content", "fixed"),
    [
        ("pkg/_version.py", "1.2.0\n", '__version__ = "1.2.0"\n'),
        ("pkg/_version.py", "1.2\n", None),  # a float: Python already
        ("version.py", "v2.0.1rc1", '__version__ = "v2.0.1rc1"'),
        ("pkg/other.py", "0.1.0", None),  # no version module: nothing to say what it is
        ("pkg/__version__.py", "0.1.0\n0.1.0\n", None),  # twice: which one?
        ("pkg/__version__.py", "1\n", None),  # a number is Python already
    ],
)
def test_which_bare_versions_are_mended(name: str, content: str, fixed: str | None) -> None:
    made = mended(content, name)
    assert (made[-1][2] if made else None) == fixed, made
