from __future__ import annotations

import codecs
import configparser
import plistlib
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from localagent.daemon import autostart
from localagent.daemon.autostart import (
    SYSTEMD_BOOTED_MARKER,
    AutostartFailed,
    CommandResult,
    System,
)
from localagent.system.errors import AgentError

NS = {"t": autostart.TASK_NAMESPACE}
OK = CommandResult(0, "", "")
AWKWARD_DIRS = ["plain", "with space", "R&D", "100%", "$HOME", "zoë ñ 中文"]
QUOTED_DIRS = ["o'brien", 'say "hi"', "back\\slash"]


@dataclass
class FakeSystem(System):
    """The OS boundary, recorded: programs answer from `answers`, files are real ones."""

    programs: set[str] = field(default_factory=lambda: {"systemctl", "crontab", "launchctl"})
    systemd_booted: bool = True
    answers: dict[tuple[str, ...], CommandResult] = field(default_factory=dict)
    crontab: str | None = None
    calls: list[list[str]] = field(default_factory=list)
    written: dict[Path, bytes] = field(default_factory=dict)

    def run(self, argv: Sequence[str], input: str | None = None) -> CommandResult:
        argv = list(argv)
        self.calls.append(argv)
        for n in range(len(argv), 0, -1):
            if tuple(argv[:n]) in self.answers:
                return self.answers[tuple(argv[:n])]
        if argv == ["crontab", "-l"]:
            if self.crontab is None:
                return CommandResult(1, "", "no crontab for alice\n")
            return CommandResult(0, self.crontab, "")
        if argv == ["crontab", "-"]:
            self.crontab = input
        return OK

    def write(self, path: Path, data: bytes) -> None:
        self.written[path] = data
        super().write(path, data)

    def exists(self, path: Path) -> bool:
        if path == SYSTEMD_BOOTED_MARKER:
            return self.systemd_booted
        return super().exists(path)

    def which(self, name: str) -> str | None:
        return f"/usr/bin/{name}" if name in self.programs else None

    def uid(self) -> int:
        return 501

    def user(self) -> str:
        return "alice"


def make_system(
    tmp_path: Path,
    platform: str,
    folder: str = "py env",
    env: dict[str, str] | None = None,
    systemd_booted: bool = True,
    programs: set[str] | None = None,
    answers: dict[tuple[str, ...], CommandResult] | None = None,
) -> FakeSystem:
    python = f"/opt/{folder}/bin/python3"
    if platform == "win32":
        # A real file, so that a `pythonw.exe` beside it can be made to exist or not.
        python = str(tmp_path / folder / "python.exe")
        Path(python).parent.mkdir(parents=True, exist_ok=True)
        Path(python).touch()
    return FakeSystem(
        platform=platform,
        home=tmp_path / "home",
        env={"USERDOMAIN": "WORKGROUP", "USERNAME": "alice"} if env is None else env,
        python=python,
        temp_dir=tmp_path / "tmp",
        systemd_booted=systemd_booted,
        programs={"systemctl", "crontab", "launchctl"} if programs is None else programs,
        answers=answers or {},
    )


def argv_in(folder: str) -> list[str]:
    return [f"/opt/{folder}/bin/python3", "-m", "localagent", "resume", "--all"]


def exec_words(value: str) -> list[str]:
    """Reads an ExecStart= value back the way systemd does: specifiers over the whole
    line, then words, then `$$` in the arguments."""
    words = shlex.split(value.replace("%%", "%"))
    return words[:1] + [word.replace("$$", "$") for word in words[1:]]


def unit_service(text: str) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment, method-assign]
    parser.read_string(text)
    assert parser["Install"]["WantedBy"] == "default.target"
    assert parser["Unit"]["After"] == "network-online.target"
    return parser["Service"]


def test_resume_argv_prefers_pythonw_beside_python_on_windows(tmp_path: Path) -> None:
    system = make_system(tmp_path, "win32")
    # The logon module resumes, logs to a file and waits for its agents (see test_windows_*).
    assert autostart.resume_argv(system) == [system.python, "-m", "localagent.logon"]
    pythonw = Path(system.python).with_name("pythonw.exe")
    pythonw.touch()
    assert autostart.resume_argv(system)[0] == str(pythonw)


def test_resume_argv_uses_the_running_python_elsewhere(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux")
    system.python = str(tmp_path / "python3")
    (tmp_path / "pythonw.exe").touch()
    assert autostart.resume_argv(system) == [system.python, "-m", "localagent", "resume", "--all"]


def test_resume_argv_without_an_interpreter_is_a_clear_error(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux")
    system.python = ""
    with pytest.raises(AgentError, match=r"sys\.executable"):
        autostart.resume_argv(system)


def test_task_xml_runs_at_logon_without_limits() -> None:
    xml = autostart.windows_task_xml(argv_in("x"), "C:\\Users\\alice", "WORKGROUP\\alice")
    task = ET.fromstring(xml)
    assert task.tag == f"{{{autostart.TASK_NAMESPACE}}}Task"
    trigger = task.find("t:Triggers/t:LogonTrigger", NS)
    assert trigger is not None
    assert trigger.findtext("t:UserId", namespaces=NS) == "WORKGROUP\\alice"
    assert trigger.findtext("t:Delay", namespaces=NS) == "PT30S"
    principal = task.find("t:Principals/t:Principal", NS)
    assert principal is not None
    assert principal.findtext("t:LogonType", namespaces=NS) == "InteractiveToken"
    assert principal.findtext("t:RunLevel", namespaces=NS) == "LeastPrivilege"
    found = task.find("t:Settings", NS)
    assert found is not None
    settings = {child.tag.split("}")[1]: child.text for child in found}
    assert settings["DisallowStartIfOnBatteries"] == "false"
    assert settings["StopIfGoingOnBatteries"] == "false"
    assert settings["ExecutionTimeLimit"] == "PT0S"
    assert settings["MultipleInstancesPolicy"] == "IgnoreNew"
    assert settings["StartWhenAvailable"] == "true"
    assert settings["Hidden"] == "true"
    actions = task.find("t:Actions", NS)
    assert actions is not None and actions.get("Context") == principal.get("id")


@pytest.mark.parametrize("folder", AWKWARD_DIRS + QUOTED_DIRS + ["a<b>c"])
def test_task_xml_carries_awkward_paths_exactly(folder: str) -> None:
    program = f"C:\\Program Files\\{folder}\\pythonw.exe"
    workdir = f"C:\\Users\\{folder}"
    xml = autostart.windows_task_xml([program, "-m", "localagent", "resume", "--all"], workdir, "u")
    action = ET.fromstring(xml).find("t:Actions/t:Exec", NS)
    assert action is not None
    assert action.findtext("t:Command", namespaces=NS) == program
    assert action.findtext("t:Arguments", namespaces=NS) == "-m localagent resume --all"
    assert action.findtext("t:WorkingDirectory", namespaces=NS) == workdir


def test_task_arguments_are_quoted_for_the_windows_command_line() -> None:
    argv = ["C:\\py\\pythonw.exe", "-m", "localagent", "a b", 'say "hi"']
    action = ET.fromstring(autostart.windows_task_xml(argv, "C:\\", "u")).find(
        "t:Actions/t:Exec", NS
    )
    assert action is not None
    assert action.findtext("t:Arguments", namespaces=NS) == '-m localagent "a b" "say \\"hi\\""'


def test_windows_install_imports_a_utf16_file_with_schtasks(tmp_path: Path) -> None:
    system = make_system(tmp_path, "win32", folder="Prögram & Files")
    message = autostart.install(system)
    path = system.temp_dir / "localagent-resume.xml"
    assert system.calls == [
        ["schtasks", "/Create", "/TN", "localagent-resume", "/XML", str(path), "/F"]
    ]
    data = system.written[path]
    assert data.startswith(codecs.BOM_UTF16_LE)
    assert data[2:].decode("utf-16-le").startswith('<?xml version="1.0" encoding="UTF-16"?>')
    task = ET.fromstring(data)
    assert task.findtext("t:Actions/t:Exec/t:Command", namespaces=NS) == system.python
    assert task.findtext("t:Actions/t:Exec/t:WorkingDirectory", namespaces=NS) == str(system.home)
    assert task.findtext("t:Principals/t:Principal/t:UserId", namespaces=NS) == "WORKGROUP\\alice"
    assert not path.exists()
    assert "localagent-resume" in message


def test_windows_user_falls_back_to_the_login_name(tmp_path: Path) -> None:
    assert autostart.windows_user({"USERNAME": "bob"}) == "bob"
    assert autostart.windows_user({}) is None
    system = make_system(tmp_path, "win32", env={})
    autostart.install(system)
    task = ET.fromstring(next(iter(system.written.values())))
    assert task.findtext("t:Triggers/t:LogonTrigger/t:UserId", namespaces=NS) == "alice"


def test_windows_install_failure_names_the_command_and_its_output(tmp_path: Path) -> None:
    system = make_system(tmp_path, "win32")
    system.answers[("schtasks", "/Create")] = CommandResult(1, "", "ERROR: Access is denied.\r\n")
    with pytest.raises(AutostartFailed) as failure:
        autostart.install(system)
    assert failure.value.exit_code == 1
    assert failure.value.command[:2] == ["schtasks", "/Create"]
    assert "ERROR: Access is denied." in failure.value.message
    assert "schtasks /Create" in failure.value.message
    assert not (system.temp_dir / "localagent-resume.xml").exists()


def test_windows_status_and_uninstall_use_schtasks(tmp_path: Path) -> None:
    system = make_system(tmp_path, "win32")
    found = autostart.status(system)
    assert (found.installed, found.mechanism) == (True, "schtasks")
    assert autostart.uninstall(system) == "Removed the scheduled task localagent-resume."
    assert system.calls == [
        ["schtasks", "/Query", "/TN", "localagent-resume"],
        ["schtasks", "/Query", "/TN", "localagent-resume"],
        ["schtasks", "/Delete", "/TN", "localagent-resume", "/F"],
    ]


def test_windows_nothing_registered(tmp_path: Path) -> None:
    system = make_system(tmp_path, "win32")
    system.answers[("schtasks", "/Query")] = CommandResult(1, "", "ERROR: not found")
    assert not autostart.status(system).installed
    assert "nothing to remove" in autostart.uninstall(system)
    assert ["schtasks", "/Delete", "/TN", "localagent-resume", "/F"] not in system.calls


def test_systemd_unit_runs_once_and_leaves_the_agents_running() -> None:
    service = unit_service(autostart.systemd_unit(argv_in("x")))
    assert exec_words(service["ExecStart"]) == argv_in("x")
    assert service["Type"] == "simple"
    assert service["KillMode"] == "process"
    assert service["Restart"] == "on-failure"
    assert service["RestartSec"] == "30"
    assert service["WorkingDirectory"] == "%h"


@pytest.mark.parametrize("folder", [folder for folder in AWKWARD_DIRS if "%" not in folder])
def test_systemd_exec_line_reads_back_as_the_same_argv(folder: str) -> None:
    argv = [*argv_in(folder), *(f"--note={other}" for other in AWKWARD_DIRS + QUOTED_DIRS)]
    assert exec_words(autostart.systemd_exec(argv)) == argv


@pytest.mark.parametrize("folder", [*QUOTED_DIRS, "100%"])
def test_systemd_program_paths_it_refuses_go_through_a_shell(folder: str) -> None:
    argv = argv_in(folder)
    words = exec_words(autostart.systemd_exec(argv))
    assert words == ["/bin/sh", "-c", 'exec "$0" "$@"', *argv]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX shell")
def test_the_shell_hands_the_program_its_arguments_unchanged(tmp_path: Path) -> None:
    program = tmp_path / 'o\'brien "q" $x' / "show"
    program.parent.mkdir()
    program.write_text('#!/bin/sh\nprintf "%s\\n" "$0" "$@"\n')
    program.chmod(0o755)
    words = exec_words(autostart.systemd_exec([str(program), "a b", "$HOME"]))
    shown = subprocess.run(words, capture_output=True, text=True, check=True).stdout
    assert shown.splitlines() == [str(program), "a b", "$HOME"]


def test_systemd_escapes_control_characters() -> None:
    assert autostart.systemd_quote("a\tb") == '"a\\x09b"'


def test_systemd_install_writes_enables_and_reloads(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux", folder="my env & co")
    system.programs = {"systemctl"}
    message = autostart.install(system)
    path = system.home / ".config" / "systemd" / "user" / "localagent-resume.service"
    assert system.calls == [
        ["systemctl", "--user", "show-environment"],
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "localagent-resume.service"],
    ]
    service = unit_service(path.read_text(encoding="utf-8"))
    assert exec_words(service["ExecStart"]) == autostart.resume_argv(system)
    assert str(path) in message


def test_systemd_unit_goes_under_xdg_config_home(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux", env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    autostart.install(system)
    assert (tmp_path / "cfg" / "systemd" / "user" / "localagent-resume.service").exists()


def test_systemd_install_replaces_an_earlier_cron_line(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux")
    system.crontab = "MAILTO=me\n@reboot old " + autostart.CRON_MARKER + "\n"
    message = autostart.install(system)
    assert system.crontab == "MAILTO=me\n"
    assert "crontab" in message


def test_systemd_install_failure_names_the_command_and_its_output(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux")
    system.answers[("systemctl", "--user", "enable")] = CommandResult(
        1, "", "Failed to enable unit: Access denied\n"
    )
    with pytest.raises(AutostartFailed, match="Access denied") as failure:
        autostart.install(system)
    assert failure.value.command == ["systemctl", "--user", "enable", "localagent-resume.service"]


def test_systemd_status_and_uninstall(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux")
    system.programs = {"systemctl"}
    autostart.install(system)
    system.calls.clear()
    found = autostart.status(system)
    assert (found.installed, found.mechanism) == (True, "systemd")
    assert ["systemctl", "--user", "is-enabled", "localagent-resume.service"] in system.calls
    system.calls.clear()
    autostart.uninstall(system)
    assert system.calls == [
        ["systemctl", "--user", "show-environment"],
        ["systemctl", "--user", "disable", "localagent-resume.service"],
        ["systemctl", "--user", "daemon-reload"],
    ]
    assert not autostart.unit_path(system).exists()
    assert not autostart.status(system).installed


def test_systemd_unit_present_but_disabled_is_not_installed(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux")
    autostart.install(system)
    system.answers[("systemctl", "--user", "is-enabled")] = CommandResult(1, "disabled\n", "")
    found = autostart.status(system)
    assert (found.installed, found.mechanism) == (False, "systemd")
    assert "disabled" in found.detail


@pytest.mark.parametrize("folder", AWKWARD_DIRS + QUOTED_DIRS)
def test_cron_line_reads_back_as_the_same_argv(folder: str) -> None:
    argv = argv_in(folder)
    line = autostart.cron_line(argv)
    assert line.startswith("@reboot ") and line.endswith(" # localagent-resume")
    command = line.removeprefix("@reboot ").replace("\\%", "%")
    assert "%" not in line.replace("\\%", "")
    assert shlex.split(command, comments=True) == argv


def test_cron_line_refuses_line_breaks() -> None:
    with pytest.raises(AgentError, match="line break"):
        autostart.cron_line(["/opt/a\nb/python3"])


@pytest.mark.parametrize(
    ("booted", "answers"),
    [
        (False, {}),
        (True, {("systemctl", "--user"): CommandResult(1, "", "Failed to connect to bus")}),
    ],
)
def test_cron_is_used_without_a_systemd_user_session(
    tmp_path: Path, booted: bool, answers: dict[tuple[str, ...], CommandResult]
) -> None:
    system = make_system(tmp_path, "linux", systemd_booted=booted, answers=answers)
    system.crontab = "# mine\nMAILTO=me\n0 * * * * /usr/bin/backup\n"
    message = autostart.install(system)
    line = autostart.cron_line(autostart.resume_argv(system))
    assert system.crontab == "# mine\nMAILTO=me\n0 * * * * /usr/bin/backup\n" + line + "\n"
    assert "@reboot" in message
    assert not autostart.unit_path(system).exists()
    autostart.install(system)
    assert system.crontab.count(autostart.CRON_MARKER) == 1
    found = autostart.status(system)
    assert (found.installed, found.mechanism) == (True, "cron")
    autostart.uninstall(system)
    assert system.crontab == "# mine\nMAILTO=me\n0 * * * * /usr/bin/backup\n"
    assert not autostart.status(system).installed


def test_cron_starts_a_crontab_when_there_is_none(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux", systemd_booted=False)
    autostart.install(system)
    assert system.crontab == autostart.cron_line(autostart.resume_argv(system)) + "\n"


def test_cron_read_failure_is_reported(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux", systemd_booted=False)
    system.answers[("crontab", "-l")] = CommandResult(1, "", "crontab: permission denied\n")
    with pytest.raises(AutostartFailed, match="permission denied"):
        autostart.install(system)


def test_no_systemd_and_no_cron_is_a_clear_error(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux", systemd_booted=False, programs=set())
    with pytest.raises(
        autostart.AutostartUnavailable, match="neither a systemd user session nor crontab"
    ) as refused:
        autostart.install(system)
    assert refused.value.exit_code == 2  # not the code of a failed goal
    assert not autostart.status(system).available
    assert "nothing to remove" in autostart.uninstall(system)


def test_linux_uninstall_removes_both_unit_and_cron_line(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux")
    autostart.install(system)
    system.crontab = "@reboot old " + autostart.CRON_MARKER + "\n"
    message = autostart.uninstall(system)
    assert not autostart.unit_path(system).exists()
    assert system.crontab == ""
    assert "systemd" in message and "crontab" in message


@pytest.mark.parametrize("folder", AWKWARD_DIRS + QUOTED_DIRS)
def test_plist_carries_the_argv_exactly(folder: str, tmp_path: Path) -> None:
    argv = argv_in(folder)
    agent = plistlib.loads(autostart.launchd_plist(argv, f"/Users/{folder}", tmp_path / "logs"))
    assert agent["Label"] == "io.localagent.resume"
    assert agent["ProgramArguments"] == argv
    assert agent["RunAtLoad"] is True
    assert agent["AbandonProcessGroup"] is True
    assert agent["WorkingDirectory"] == f"/Users/{folder}"
    assert (
        agent["StandardOutPath"]
        == agent["StandardErrorPath"]
        == str(tmp_path / "logs" / "autostart.log")
    )


def test_launchd_install_bootstraps_the_agent(tmp_path: Path) -> None:
    system = make_system(tmp_path, "darwin")
    autostart.install(system)
    path = system.home / "Library" / "LaunchAgents" / "io.localagent.resume.plist"
    assert system.calls == [["launchctl", "bootstrap", "gui/501", str(path)]]
    agent = plistlib.loads(path.read_bytes())
    assert agent["ProgramArguments"] == autostart.resume_argv(system)
    assert (system.home / "Library" / "Logs" / "localagent").is_dir()
    system.calls.clear()
    autostart.install(system)
    assert system.calls == [
        ["launchctl", "bootout", "gui/501", str(path)],
        ["launchctl", "bootstrap", "gui/501", str(path)],
    ]


def test_launchd_falls_back_to_load_when_bootstrap_fails(tmp_path: Path) -> None:
    system = make_system(tmp_path, "darwin")
    system.answers[("launchctl", "bootstrap")] = CommandResult(5, "", "Input/output error")
    autostart.install(system)
    path = autostart.plist_path(system)
    assert system.calls[-1] == ["launchctl", "load", "-w", str(path)]
    system.answers[("launchctl", "load")] = CommandResult(1, "", "Load failed")
    with pytest.raises(AutostartFailed) as failure:
        autostart.install(system)
    assert "Load failed" in failure.value.message
    assert "Input/output error" in failure.value.message


def test_launchd_status_and_uninstall(tmp_path: Path) -> None:
    system = make_system(tmp_path, "darwin")
    assert not autostart.status(system).installed
    autostart.install(system)
    found = autostart.status(system)
    assert (found.installed, found.mechanism) == (True, "launchd")
    assert ["launchctl", "print", "gui/501/io.localagent.resume"] in system.calls
    system.answers[("launchctl", "print")] = CommandResult(113, "", "Could not find service")
    assert "next login" in autostart.status(system).detail
    system.calls.clear()
    autostart.uninstall(system)
    assert system.calls == [["launchctl", "bootout", "gui/501", str(autostart.plist_path(system))]]
    assert not autostart.plist_path(system).exists()
    assert "nothing to remove" in autostart.uninstall(system)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX programs write UTF-8; see below")
def test_system_runs_programs_and_decodes_their_output() -> None:
    system = System()
    script = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read() + b'\\xff')"
    result = system.run([sys.executable, "-c", script], input="zoë")
    assert result == CommandResult(0, "zoë\ufffd", "")
    missing = system.run(["localagent-no-such-program"])
    assert missing.returncode == 127 and "not found" in missing.output


# ---- the installing shell's settings go with the definition (issue 8 item 13) -------------

SETTINGS_ENV = {
    "OLLAMA_HOST": "http://10.0.0.5:11434",
    "OLLAMA_MODEL": "qwen3:8b",
    "LOCALAGENT_MAX_ROUNDS": "60",
    "LOCALAGENT_NOTE": 'a "q" \\ back %h $HOME zoë\ttab',
    "LOCALAGENT_API_KEY": "sk-very-secret",
    "PATH": "/usr/bin",
    "HOME_OLLAMA_X": "not ours",
}
CARRIED = {k: v for k, v in SETTINGS_ENV.items() if k.startswith(("OLLAMA_", "LOCALAGENT_"))}
CARRIED.pop("LOCALAGENT_API_KEY")


def environment_lines(unit: str) -> dict[str, str]:
    """Environment= lines read back as systemd does: unquote, C-unescape, then `%%`."""
    found = {}
    for line in unit.splitlines():
        if not line.startswith("Environment="):
            continue
        value = line.removeprefix("Environment=")
        assert value[0] == value[-1] == '"', line
        text = re.sub(
            r"\\(x[0-9a-f]{2}|.)",
            lambda m: chr(int(m[1][1:], 16)) if m[1].startswith("x") else m[1],
            value[1:-1],
        ).replace("%%", "%")
        name, _, val = text.partition("=")
        found[name] = val
    return found


def test_systemd_unit_carries_the_settings_variables_but_never_the_key(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux", env=dict(SETTINGS_ENV))
    system.programs = {"systemctl"}
    message = autostart.install(system)
    unit = unit_path_text(system)
    assert environment_lines(unit) == CARRIED
    assert "sk-very-secret" not in unit and "LOCALAGENT_API_KEY" in message
    assert "OLLAMA_HOST" in message
    (exec_line,) = [x for x in unit.splitlines() if x.startswith("ExecStart=")]
    assert exec_words(exec_line.removeprefix("ExecStart=")) == autostart.resume_argv(system)


def unit_path_text(system: FakeSystem) -> str:
    path = system.home / ".config" / "systemd" / "user" / "localagent-resume.service"
    return path.read_text(encoding="utf-8")


def test_cron_line_carries_the_settings_variables(tmp_path: Path) -> None:
    system = make_system(tmp_path, "linux", env=dict(SETTINGS_ENV), systemd_booted=False)
    message = autostart.install(system)
    assert system.crontab is not None and "sk-very-secret" not in system.crontab
    (line,) = [x for x in system.crontab.splitlines() if x.endswith(autostart.CRON_MARKER)]
    command = line.removeprefix("@reboot ").replace("\\%", "%")
    words = shlex.split(command, comments=True)
    assert words[0] == "/usr/bin/env"
    assert words[1 : 1 + len(CARRIED)] == [f"{k}={v}" for k, v in sorted(CARRIED.items())]
    assert words[1 + len(CARRIED) :] == autostart.resume_argv(system)
    assert "LOCALAGENT_API_KEY" in message


def test_launchd_plist_carries_the_settings_variables(tmp_path: Path) -> None:
    system = make_system(tmp_path, "darwin", env=dict(SETTINGS_ENV))
    message = autostart.install(system)
    path = system.home / "Library" / "LaunchAgents" / "io.localagent.resume.plist"
    assert b"sk-very-secret" not in path.read_bytes()
    assert plistlib.loads(path.read_bytes())["EnvironmentVariables"] == CARRIED
    assert "LOCALAGENT_API_KEY" in message


def test_windows_says_which_variables_it_cannot_carry(tmp_path: Path) -> None:
    system = make_system(tmp_path, "win32", env={"USERNAME": "alice", **SETTINGS_ENV})
    message = autostart.install(system)
    assert "OLLAMA_HOST" in message and "setx" in message
    assert all(b"sk-very-secret" not in data for data in system.written.values())


# ---- Windows: the console code page, the logon task (issue 17 items 6 and 10) -------------

CODE_PAGE_WRITER = """
import ctypes, sys
kernel32 = ctypes.WinDLL("kernel32")
page = kernel32.GetConsoleOutputCP() or kernel32.GetOEMCP()
sys.stdout.buffer.write("Zugriff verweigert: zoë".encode(f"cp{page}"))
"""


@pytest.mark.skipif(sys.platform != "win32", reason="Windows console programs and code pages")
def test_windows_output_is_decoded_in_the_console_code_page() -> None:
    # As schtasks does: its messages come in the console's (else the OEM) code page.
    result = System().run([sys.executable, "-c", CODE_PAGE_WRITER])
    assert result == CommandResult(0, "Zugriff verweigert: zoë", "")


def test_the_logon_task_runs_the_logon_module(tmp_path: Path) -> None:
    system = make_system(tmp_path, "win32")
    Path(system.python).with_name("pythonw.exe").touch()
    message = autostart.install(system)
    task = ET.fromstring(next(iter(system.written.values())))
    command = task.findtext("t:Actions/t:Exec/t:Command", namespaces=NS)
    assert command == str(Path(system.python).with_name("pythonw.exe"))
    assert task.findtext("t:Actions/t:Exec/t:Arguments", namespaces=NS) == "-m localagent.logon"
    assert "stays while their agents run" in message and "autostart.log" in message
