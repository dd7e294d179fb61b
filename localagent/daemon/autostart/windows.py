"""Windows: a Task Scheduler task that runs the logon program when the user logs on."""

from __future__ import annotations

import codecs
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence

from localagent.daemon.autostart.system import (
    AutostartStatus,
    System,
    check,
    env_note,
    resume_argv,
    shown,
)

TASK_NAME = "localagent-resume"
TASK_NAMESPACE = "http://schemas.microsoft.com/windows/2004/02/mit/task"
# Gives Ollama, itself often started at logon, time to come up before the agents call it.
LOGON_DELAY = "PT30S"


def windows_user(env: Mapping[str, str]) -> str | None:
    name = env.get("USERNAME")
    if not name:
        return None
    domain = env.get("USERDOMAIN")
    return f"{domain}\\{name}" if domain else name


_TASK_SETTINGS = (
    ("MultipleInstancesPolicy", "IgnoreNew"),
    ("DisallowStartIfOnBatteries", "false"),
    ("StopIfGoingOnBatteries", "false"),
    ("StartWhenAvailable", "true"),
    ("Hidden", "true"),
    # PT0S lifts the default 72-hour limit, which would kill a long run.
    ("ExecutionTimeLimit", "PT0S"),
)


def windows_task_xml(argv: Sequence[str], workdir: str, user: str) -> str:
    """A Task Scheduler definition that runs `argv` shortly after `user` logs on."""
    task = ET.Element("Task", {"version": "1.2", "xmlns": TASK_NAMESPACE})
    info = _child(task, "RegistrationInfo")
    _child(info, "Author", user)
    _child(info, "Description", "Resumes unfinished localagent goals after you log on.")
    _child(info, "URI", "\\" + TASK_NAME)
    trigger = _child(_child(task, "Triggers"), "LogonTrigger")
    # Without a UserId the trigger fires at every user's logon, which only an
    # administrator may register.
    _child(trigger, "UserId", user)
    _child(trigger, "Delay", LOGON_DELAY)
    principal = _child(_child(task, "Principals"), "Principal", id="Author")
    _child(principal, "UserId", user)
    # InteractiveToken runs in the user's session without storing a password, which also
    # lets an unprivileged user register the task.
    _child(principal, "LogonType", "InteractiveToken")
    _child(principal, "RunLevel", "LeastPrivilege")
    settings = _child(task, "Settings")
    for name, value in _TASK_SETTINGS:
        _child(settings, name, value)
    restart = _child(settings, "RestartOnFailure")
    _child(restart, "Interval", "PT1M")
    _child(restart, "Count", "3")
    action = _child(_child(task, "Actions", Context="Author"), "Exec")
    _child(action, "Command", argv[0])
    _child(action, "Arguments", subprocess.list2cmdline(argv[1:]))
    _child(action, "WorkingDirectory", workdir)
    ET.indent(task)
    return '<?xml version="1.0" encoding="UTF-16"?>\n' + ET.tostring(task, "unicode") + "\n"


def _child(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    element.text = text
    return element


def windows_task_file(xml: str) -> bytes:
    """The bytes schtasks expects for /XML: UTF-16 little-endian with a byte-order mark."""
    return codecs.BOM_UTF16_LE + xml.encode("utf-16-le")


class TaskScheduler:
    name = "schtasks"

    def install(self, system: System) -> str:
        argv = resume_argv(system)
        user = windows_user(system.env) or system.user()
        path = system.temp_dir / f"{TASK_NAME}.xml"
        system.write(path, windows_task_file(windows_task_xml(argv, str(system.home), user)))
        try:
            check(system, ["schtasks", "/Create", "/TN", TASK_NAME, "/XML", str(path), "/F"])
        finally:
            system.remove(path)
        return (
            f"Registered the task {TASK_NAME}: it runs `{shown(argv, system)}` at logon, "
            "which resumes unfinished goals and stays while their agents run (its log: "
            "autostart.log in localagent's data folder)." + env_note(system.env, carried=False)
        )

    def uninstall(self, system: System) -> str | None:
        if not self._registered(system):
            return None
        check(system, ["schtasks", "/Delete", "/TN", TASK_NAME, "/F"])
        return f"Removed the scheduled task {TASK_NAME}."

    def status(self, system: System) -> AutostartStatus:
        if self._registered(system):
            return AutostartStatus(True, self.name, f"The task {TASK_NAME} is registered.")
        return AutostartStatus(False, self.name, f"There is no scheduled task {TASK_NAME}.")

    def _registered(self, system: System) -> bool:
        return system.run(["schtasks", "/Query", "/TN", TASK_NAME]).returncode == 0
