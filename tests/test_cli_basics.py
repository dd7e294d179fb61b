"""What every CLI has: a version, -h, a stable --help, config errors all at once, and a
distribution that declares every library it imports."""

from __future__ import annotations

import ast
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest
from support import run_cli

import localagent
from localagent.config.userconfig import config_path, load_settings
from localagent.system.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden" / "help.txt"
HELP_OF = ("", "start", "resume", "ask", "stop", "status", "list", "doctor")
# Imports that name a module, not a distribution; and the standard library.
STDLIB = set(sys.stdlib_module_names)
DISTRIBUTION_OF = {"typer": "typer", "rich": "rich", "httpx": "httpx", "mcp": "mcp"}


def _help_text() -> str:
    """`--help` of the app and its main commands, as a user's 100-column terminal shows it.
    Rendered in this process, by the app the command runs (`-h` is run as a command below)."""
    from typer.testing import CliRunner

    from localagent.cli import app

    env = {"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1", "FORCE_COLOR": None}
    parts = []
    for command in HELP_OF:
        args = [*([command] if command else []), "--help"]
        done = CliRunner().invoke(app, args, env=env, prog_name="localagent")
        assert done.exit_code == 0, done.output
        parts.append(f"$ {' '.join(['localagent', *args])}\n{done.stdout}")
    return "\n".join(parts)


def test_version_flags_print_the_version() -> None:
    for flag in ("--version", "-V"):
        result = run_cli(dict(os.environ), flag)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"localagent {localagent.__version__}"


def test_h_is_help_for_the_app_and_its_commands() -> None:
    for args in (["-h"], ["start", "-h"], ["status", "-h"]):
        result = run_cli(dict(os.environ), *args)
        assert result.returncode == 0, result.stderr
        assert "Usage: localagent" in result.stdout


def test_help_matches_the_golden_file() -> None:
    """--help is part of what users read; a typer upgrade or an edit that changes it shows
    here. After an intended change: LOCALAGENT_REGOLD=1 python -m pytest -k golden_file."""
    text = _help_text()
    if os.environ.get("LOCALAGENT_REGOLD"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")
    assert "<bool>" not in text and "<str>" not in text and "{goal}" not in text


def test_the_version_is_written_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert project["name"] != "localagent"  # that PyPI name belongs to another project


def _third_party_imports() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "localagent").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - STDLIB - {"localagent", "_winapi", "winreg", "msvcrt", "_overlapped"}


def test_every_imported_library_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {
        re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0].lower()
        for spec in [*project["dependencies"], *project["optional-dependencies"]["mcp"]]
    }
    missing = {
        DISTRIBUTION_OF.get(name, name)
        for name in _third_party_imports()
        if DISTRIBUTION_OF.get(name, name) not in declared
    }
    assert not missing, f"imported but not declared: {sorted(missing)}"
    assert (ROOT / "LICENSE").is_file() and (ROOT / "localagent" / "py.typed").is_file()


def test_config_errors_are_reported_all_at_once_with_suggestions() -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('modell = "x"\nchekcs = ["pytest"]\nmcpp = {}\n', encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_settings()
    message = caught.value.message
    assert "'modell' (did you mean 'model'?)" in message
    assert "'chekcs' (did you mean 'checks'?)" in message
    assert "'mcpp' (did you mean 'mcp'?)" in message
    for key in ("checks", "delegates", "mcp", "prompts"):
        assert re.search(rf"known settings:.*\b{key}\b", message)


def test_invalid_values_are_reported_all_at_once() -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text("max_rounds = 0\ntemperature = -3\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_settings()
    assert "max_rounds" in caught.value.message and "temperature" in caught.value.message


def test_localagent_model_names_the_model_for_any_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_MODEL", "from-ollama-variable")
    assert load_settings().model == "from-ollama-variable"
    monkeypatch.setenv("LOCALAGENT_MODEL", "qwen2.5-coder:1.5b")
    assert load_settings().model == "qwen2.5-coder:1.5b"
    assert load_settings(model="flag-wins").model == "flag-wins"


def test_demo_exits_as_start_would(tmp_path: Path) -> None:
    """`demo` ends with the code of its run: 0 when its goal completes, 1 when it fails."""
    env = {**os.environ}
    done = run_cli(env, "demo", "-w", str(tmp_path / "ok"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "goal completed" in done.stdout
    env["LOCALAGENT_MAX_ROUNDS"] = "1"  # too few rounds for the scripted goal
    done = run_cli(env, "demo", "-w", str(tmp_path / "short"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "goal failed" in done.stdout
    assert done.stderr.splitlines()[-1].startswith("localagent: ")
