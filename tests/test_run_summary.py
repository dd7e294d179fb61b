"""A test run's summary, as the facts, a subtask's end, a verdict's evidence and `status`
show it, is pytest's last line without the bars around it: the 1.5B's mathx verdict read
"4 passed in 0.01s ===============================", 31 `=` (8 tokens the engine read
each time it was shown). A script's own last line stays as it printed it."""

from __future__ import annotations

from pathlib import Path

from localagent.state.checkruns import outcome
from localagent.tools import ToolContext, execute

TESTS = "def test_one():\n    assert 1 == 1\n\n\ndef test_two():\n    assert 2 == {two}\n"
CMD = "python -m pytest -p no:cacheprovider test_two.py"


def _summary(root: Path, cmd: str) -> tuple[bool | None, str]:
    result = execute(ToolContext(root), "run_cmd", {"cmd": cmd})
    found = outcome(cmd, result.text)
    assert found is not None, result.text
    return found


def test_a_passing_test_runs_summary_has_no_bars(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_two.py").write_text(TESTS.format(two=2))
    passed, said = _summary(tmp_path, CMD)
    assert passed is True and said.startswith("2 passed in ") and said.endswith("s"), said
    (tmp_path / "test_two.py").write_text(TESTS.format(two=3))
    passed, said = _summary(tmp_path, CMD)
    assert passed is False and said == "FAILED test_two.py::test_two - assert 2 == 3", said


def test_a_test_file_that_does_not_load_is_summed_up_without_bars(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_two.py").write_text("import nowhere_to_be_found\n")
    passed, said = _summary(tmp_path, CMD)
    assert passed is False and "1 error" in said and "=" not in said, said


def test_a_scripts_last_line_stays_as_it_printed_it(tmp_path: Path) -> None:
    (tmp_path / "menu.py").write_text("print('=== Menu ===')\n")
    assert _summary(tmp_path, "python menu.py") == (True, "exit code 0: === Menu ===")
