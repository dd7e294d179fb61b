"""Which Python environment a workspace's commands run in: the workspace's, never localagent's.

`python`, `pytest` and `ruff` come from the workspace's virtual environment (`.venv/` or
`venv/`) when it has one, else from PATH. `pip` always runs inside a virtual environment
of the workspace, created as `.venv/` when there is none, so a model's
`pip uninstall -y orjson` can never break the agent's own environment.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from localagent.system.process import LaunchError, run_process

VENV_NAMES = (".venv", "venv")
CREATED_VENV = ".venv"
WINDOWS = sys.platform == "win32"
# Windows Store "app execution aliases" live here; the python one opens the Store.
STORE_ALIASES = "windowsapps"
# What a command inherits from localagent's environment (the `pass_env` setting adds
# more): what programs need to find themselves, the user, the language and the temporary
# folder; never keys, tokens or localagent's own settings.
PASSED_VARIABLES = (
    *("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE", "LC_*"),
    *("TMPDIR", "TEMP", "TMP", "SSL_CERT_FILE", "SSL_CERT_DIR"),
    # Windows: what its programs, Python's among them, cannot start without.
    *("SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERNAME", "USERPROFILE"),
    *("HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "ALLUSERSPROFILE"),
    *("PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432", "COMMONPROGRAMFILES"),
    *("COMMONPROGRAMFILES(X86)", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS"),
)


class WorkspaceEnvError(Exception):
    """The workspace's environment cannot be used or created; the message says why."""


def venv_program(venv: Path, name: str) -> Path:
    if WINDOWS:
        return venv / "Scripts" / f"{name}.exe"
    return venv / "bin" / name


def _own_environments() -> set[Path]:
    """The environments localagent itself runs from; no command may install into them."""
    return {Path(prefix).resolve() for prefix in (sys.prefix, sys.base_prefix)}


def find_venv(root: Path) -> Path | None:
    """The workspace's virtual environment, or None (localagent's own never counts)."""
    for name in VENV_NAMES:
        folder = root / name
        if not venv_program(folder, "python").is_file():
            continue
        try:
            if folder.resolve() in _own_environments():
                continue
        except OSError:
            continue
        return folder
    return None


def which(name: str, root: Path | None = None) -> str | None:
    """`name` found on PATH, never inside the workspace `root` nor through a relative entry.

    What is found depends only on PATH and the workspace, never on the current folder:
    the background agent runs in the workspace, a foreground one wherever the user is,
    and both must run the same programs. So a relative entry (`.`, `bin`), which names
    another folder from each current folder, never counts, and an absolute one counts
    wherever localagent was started. On Windows only `NAME.exe` counts: a `.bat` or
    `.cmd` would run through cmd.exe.
    """
    filename = f"{name}.exe" if WINDOWS else name
    for folder in path_folders(root)[0]:
        candidate = folder / filename
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def path_folders(root: Path | None = None) -> tuple[list[Path], list[str]]:
    """The PATH entries programs are looked up in, and the entries skipped, each with why."""
    inside = root.resolve() if root is not None else None
    usable: list[Path] = []
    skipped: list[str] = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        folder = Path(entry)
        if not entry or STORE_ALIASES in entry.casefold():
            continue
        if not folder.is_absolute():
            skipped.append(f"{entry!r} (relative)")
            continue
        try:
            resolved = folder.resolve()
        except OSError:
            continue
        if inside is not None and resolved.is_relative_to(inside):
            skipped.append(f"{entry!r} (inside the workspace)")
            continue
        usable.append(folder)
    return usable, skipped


def path_python(root: Path) -> str:
    """The interpreter a workspace without a virtual environment uses: PATH's, else the
    one localagent's own environment was made from."""
    return _path_python(root)[0]


def _path_python(root: Path) -> tuple[str, bool]:
    """path_python, and whether it was found on PATH."""
    for name in ("python",) if WINDOWS else ("python3", "python"):
        found = which(name, root)
        if found is not None:
            return found, True
    return getattr(sys, "_base_executable", "") or sys.executable, False


def program_argv(root: Path, name: str) -> list[str]:
    """The argv prefix that runs `python`, `pytest`, `ruff` (or another program) for root.

    Inside a venv, pytest runs with its interpreter; ruff, a standalone program, may
    also come from PATH when the venv has none.
    """
    venv = find_venv(root)
    python = str(venv_program(venv, "python")) if venv else path_python(root)
    if name == "python":
        return [python]
    if venv is not None and venv_program(venv, name).is_file():
        return [str(venv_program(venv, name))]
    if venv is not None and name == "pytest":
        # pytest imports the project: only the venv's interpreter may run it.
        return [python, "-m", name]
    found = which(name, root)
    if found is not None:
        return [found]
    if name in ("pytest", "ruff"):
        return [python, "-m", name]
    raise WorkspaceEnvError(f"program {name!r} was not found on PATH")


def command_env(root: Path, pass_env: tuple[str, ...] = ()) -> dict[str, str | None]:
    """The changes to localagent's environment that a command gets: every variable that is
    neither on PASSED_VARIABLES nor matched by `pass_env` removed (None), so no API key or
    token reaches it, and the workspace's environment first on PATH."""
    wanted = [*PASSED_VARIABLES, *pass_env]
    env: dict[str, str | None] = {name: None for name in os.environ if not _passed(name, wanted)}
    venv = find_venv(root)
    if venv is not None:
        scripts = venv_program(venv, "python").parent
        path = os.pathsep.join([str(scripts), os.environ.get("PATH", "")])
        env.update(VIRTUAL_ENV=str(venv), PATH=path)
    return env


def _passed(name: str, wanted: list[str]) -> bool:
    # Windows reads variable names in any case.
    key = name.upper() if WINDOWS else name
    return any(fnmatch.fnmatchcase(key, p.upper() if WINDOWS else p) for p in wanted)


def pip_python(root: Path, timeout: float, cancelled: Callable[[], bool]) -> str:
    """The python of the workspace environment pip runs in, creating `.venv/` if needed."""
    venv = find_venv(root) or _create_venv(root, timeout, cancelled)
    where = venv.resolve()
    if not where.is_relative_to(root.resolve()):
        raise WorkspaceEnvError(
            f"pip would install into {venv.name}/, which leads outside the workspace "
            f"({where}); pip may only change an environment inside the workspace"
        )
    return str(venv_program(venv, "python"))


def _create_venv(root: Path, timeout: float, cancelled: Callable[[], bool]) -> Path:
    target = root / CREATED_VENV
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise WorkspaceEnvError(
            f"pip needs a virtual environment, and {CREATED_VENV} in the workspace is not a "
            "folder that one can be created in; remove it or create a venv there yourself"
        )
    if target.resolve() in _own_environments():
        raise WorkspaceEnvError(
            f"the workspace's {CREATED_VENV} is the environment localagent runs from; pip is "
            "refused there so the agent cannot break itself (install localagent elsewhere)"
        )
    failures = []
    for python in dict.fromkeys([path_python(root), getattr(sys, "_base_executable", "")]):
        if not python:
            continue
        made = _run_venv(python, target, timeout, cancelled)
        if made is None:
            _inherit(python, target, timeout, cancelled)
            return target
        failures.append(made)
    raise WorkspaceEnvError(
        f"pip needs a virtual environment and creating {CREATED_VENV} failed: "
        + "; ".join(failures)
    )


def _run_venv(
    python: str, target: Path, timeout: float, cancelled: Callable[[], bool]
) -> str | None:
    """None once `python -m venv target` made a usable environment, else what went wrong."""
    argv = [python, "-m", "venv", str(target)]
    try:
        result = run_process(argv, target.parent, timeout, 2000, cancelled)
    except LaunchError as exc:
        return str(exc)
    if result.returncode == 0 and venv_program(target, "python").is_file():
        return None
    if result.cancelled:
        raise WorkspaceEnvError("stopped while creating the virtual environment")
    last = result.output.strip().splitlines()[-1:] or ["no output"]
    return f"{python} -m venv exited with {result.returncode}: {last[0][:300]}"


INHERITED = "localagent-inherited.pth"
_SITE_DIRS = (
    "import json, sys; print(json.dumps([p for p in sys.path if p.endswith(('site-packages', "
    "'dist-packages'))]))"
)
_OWN_SITE = "import json, sysconfig; print(json.dumps(sysconfig.get_paths()['purelib']))"


def _inherit(python: str, target: Path, timeout: float, cancelled: Callable[[], bool]) -> None:
    """Let the new environment import what `python`, which ran the workspace's commands
    until now, could (pytest, ruff): a `.pth` file in its site-packages lists `python`'s.
    Qwen2.5-Coder-1.5B ran `pip install -r requirements.txt` in a workspace without one:
    the `.venv` made for it had no pytest, and every test run after it failed with "No
    module named pytest". pip installs and uninstalls in the new environment only ("Not
    uninstalling ... outside environment"); what it installs comes first."""
    own = _json_line([str(venv_program(target, "python")), "-c", _OWN_SITE], target, timeout)
    dirs = _json_line([python, "-c", _SITE_DIRS], target, timeout)
    if not isinstance(own, str) or not isinstance(dirs, list) or cancelled():
        return
    kept = [d for d in dirs if isinstance(d, str) and d and Path(d) != Path(own) and "\n" not in d]
    if kept:
        with contextlib.suppress(OSError):
            (Path(own) / INHERITED).write_text("\n".join(kept) + "\n", encoding="utf-8")


def _json_line(argv: list[str], target: Path, timeout: float) -> object:
    """The JSON a short Python one-liner printed on its last line, or None."""
    try:
        result = run_process(argv, target.parent, timeout, 20_000)
    except LaunchError:
        return None
    lines = result.output.strip().splitlines() if result.returncode == 0 else []
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None


def describe_interpreter(root: Path) -> str:
    """Which interpreter the workspace's commands use, in one sentence (doctor, README)."""
    venv = find_venv(root)
    if venv is not None:
        python = venv_program(venv, "python")
        return (
            f"python, pytest and pip run in the workspace's virtual environment "
            f"{venv.name}/ ({python})"
        )
    python, on_path = _path_python(root)
    found = "found on PATH" if on_path else "none on PATH: the one localagent was installed from"
    skipped = path_folders(root)[1]
    ignored = f"; PATH entries ignored: {', '.join(skipped)}" if skipped else ""
    return (
        f"python is {python} ({found}; the workspace has no .venv/ or venv/); pip first "
        f"creates {CREATED_VENV}/ in the workspace and installs there{ignored}"
    )
