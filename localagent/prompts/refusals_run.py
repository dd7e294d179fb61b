"""The refusals of the tools that run programs (run_cmd's command line, the coding
agents, git, MCP servers) and of a call's arguments: what the model reads when a call
cannot be done. Raised by name like those of `refusals`; all placeholders optional."""

from __future__ import annotations

from localagent.prompts.refusals import refusal
from localagent.prompts.templates import Prompt

COMMANDS = {
    "command_unparsable": refusal(
        "cannot parse command {cmd}: {problem}", "a command that does not split", "cmd problem"
    ),
    "command_empty": refusal(
        "the command is empty; give one program and its arguments", "run_cmd with no command"
    ),
    "program_not_allowed": refusal(
        "program {program} is not allowed; allowed programs: {allowed}",
        "a program not on allowed_commands",
        "program allowed",
    ),
    "program_as_path": refusal(
        "give the program by name ({name}), not as a path", "a program given as a path", "name"
    ),
    "argument_outside": refusal(
        "argument {argument} names {problem}; commands may only name files and folders "
        "inside the workspace, by paths relative to it",
        "a command argument naming a path outside the workspace",
        "argument problem",
    ),
    "pip_outside": refusal(
        "'pip {action}' changes pip's {what} outside the workspace and is not allowed; pip "
        "may only change the workspace's own environment",
        "a pip command that changes pip's own settings",
        "action what",
    ),
    "shell_line_break": refusal(
        "shell syntax a line break is not supported: a command is one line; run one program "
        "per call",
        "a command of several lines",
    ),
    "shell_operator": refusal(
        "shell syntax {operator} is not supported (there is no shell; only inside quotes is "
        "it a plain character); run one program per call without pipes, redirections, "
        "chaining or substitution",
        "a command with a shell operator",
        "operator",
    ),
    "python_forms": refusal(
        "use 'python [-u] [-B] SCRIPT.py ...' with a script in the workspace, or "
        "'python -m MODULE ...' with MODULE one of {modules}",
        "the end of the python refusals: how python may run",
        "modules",
    ),
    "python_module": refusal(
        "python -m {module} is not allowed; {forms}",
        "python -m of a module not allowed",
        "module forms",
    ),
    "python_bare": refusal("bare python is not allowed; {forms}", "python with no script", "forms"),
    "python_stdin": refusal(
        "python reading a script from stdin ('python -') is not allowed; {forms}",
        "python -",
        "forms",
    ),
    "python_c": refusal(
        "python -c is not allowed; write the code to a .py file in the workspace with "
        "write_file, then run 'python FILE.py'",
        "python -c",
    ),
    "python_option": refusal(
        "python option {option} is not allowed; {forms}",
        "a python option not allowed",
        "option forms",
    ),
    "cannot_run": refusal(
        "cannot run {cmd}: {problem}", "a command the system could not start", "cmd problem"
    ),
    "no_such_script": refusal(
        "script {path} does not exist; write it first or list_dir", "python of no script", "path"
    ),
    "arguments_not_json": refusal(
        "the arguments are not valid JSON ({problem})", "arguments that are not JSON", "problem"
    ),
    "arguments_not_object": refusal(
        "the arguments must be a JSON object, got {kind}",
        "arguments that are not an object",
        "kind",
    ),
}

DELEGATE = {
    "no_such_agent": refusal(
        "no coding agent named {agent}; configured agents: {agents}",
        "delegate to an agent not configured",
        "agent agents",
    ),
    "no_agents": refusal(
        "none (add [delegates.NAME] to the config file)", "no_such_agent's agents: none"
    ),
    "agent_unrunnable": refusal(
        "cannot run coding agent {agent}: {problem}",
        "a coding agent that did not start",
        "agent problem",
    ),
    "task_empty": refusal(
        "the task is empty; say what the coding agent should do", "an empty task"
    ),
    "task_nul": refusal(
        "the task holds a NUL character; give it as plain text", "a task with a NUL"
    ),
    "task_dash": refusal(
        "the task may not start with '-' (it would read as an option); reword it",
        "a task that would read as an option",
    ),
    "agent_program_missing": refusal(
        "program {program} was not found; install it or fix its command in the [delegates] "
        "section of the config file",
        "a coding agent whose program is not installed",
        "program",
    ),
    "agent_batch_file": refusal(
        "{program} is a batch file, which cannot be given a task safely; configure the "
        "agent's .exe (or `python -m ...`) in the [delegates] section of the config file",
        "a coding agent that is a Windows batch file",
        "program",
    ),
}

GIT = {
    "commit_message_empty": refusal(
        "the commit message is empty or holds a NUL; say what the commit changes",
        "git_commit with no message",
    ),
    "git_paths_unreadable": refusal(
        "cannot read paths {paths}: {problem}",
        "git_commit paths that do not split",
        "paths problem",
    ),
    "git_unrunnable": refusal("cannot run git: {problem}", "git that did not start", "problem"),
    "git_stopped": refusal("git was stopped: the agent was asked to stop", "git stopped by a stop"),
    "git_timed_out": refusal(
        "git took longer than {seconds}s and was killed:\n{output}",
        "git that ran too long",
        "seconds output",
    ),
    "git_missing": refusal(
        "git is not installed or not on PATH; the git tools need the git program",
        "a git tool with no git installed",
    ),
    "git_batch_file": refusal(
        "git on PATH is a batch file ({program}); the git tools need git.exe",
        "git that is a Windows batch file",
        "program",
    ),
    "not_a_repository": refusal(
        "the workspace is not a git repository (git says: {said}); the git tools work on a "
        "repository whose top level is the workspace",
        "a git tool in a workspace with no repository",
        "said",
    ),
    "repository_above": refusal(
        "the workspace is inside the git repository whose top level is {top}, outside the "
        "workspace; the git tools work only on a repository whose top level is the "
        "workspace itself, so a commit cannot take files outside it",
        "a git tool in a workspace inside another repository",
        "top",
    ),
    "git_dir_unknown": refusal(
        "git cannot tell where the repository is kept:\n{output}",
        "a repository whose folder git cannot name",
        "output",
    ),
    "repository_kept_outside": refusal(
        "the workspace's repository keeps its {what} at {folder}, outside the workspace "
        "(its .git is a file or a link naming another repository); the git tools work only "
        "on a repository kept inside the workspace, so that a commit cannot move another "
        "repository's branch",
        "a repository kept outside the workspace (what: git folder, branches and objects)",
        "what folder",
    ),
    "git_config_unreadable": refusal(
        "cannot read the repository's git configuration: {problem}",
        "a git configuration that cannot be read",
        "problem",
    ),
    "git_config_bad": refusal(
        "cannot read the repository's git configuration (git says: {said}); the git tools "
        "need git 2.26 or later and a configuration under 1 MB",
        "a git configuration git cannot list",
        "said",
    ),
    "git_config_unswitchable": refusal(
        "the repository's git configuration names a {what} {name} that the git tools cannot "
        "switch off; rename or remove it",
        "a git setting the git tools cannot override",
        "what name",
    ),
}

MCP = {
    "mcp_call_failed": refusal(
        "{tool} failed: {problem}", "an MCP tool that failed", "tool problem"
    ),
    "mcp_cancelled": refusal(
        "{tool}: stopped: the agent was asked to stop; the call was cancelled and its "
        "effect is unknown",
        "result: an MCP call stopped by a stop",
        "tool",
    ),
    "mcp_timed_out": refusal(
        "{tool} timed out after {seconds}s: the MCP server {server} was stopped ({ended}); "
        "the call's effect is unknown. {next}",
        "an MCP call that ran too long (next: mcp_restarts or mcp_no_restart)",
        "tool seconds server ended next",
    ),
    "mcp_server_stopped": refusal(
        "{tool}: the MCP server {server} stopped during the call ({problem}); the call's "
        "effect is unknown. {next}",
        "an MCP server that stopped during a call (next: mcp_restarts or mcp_no_restart)",
        "tool server problem next",
    ),
    "mcp_restarts": refusal(
        "It is restarted at its next call (once per run).",
        "the end of an MCP failure: the server will be restarted",
    ),
    "mcp_no_restart": refusal(
        "It was already restarted once in this run: its tools are unavailable until the "
        "next start or resume.",
        "the end of an MCP failure: the server stays stopped",
    ),
    "mcp_not_running": refusal(
        "the MCP server {server} is not running ({problem}); it was already restarted once "
        "in this run: its tools are unavailable until the next start or resume",
        "a call of an MCP server that stopped and was restarted once",
        "server problem",
    ),
    "mcp_restart_failed": refusal(
        "the MCP server {server} could not be restarted: {problem}",
        "an MCP server that did not restart",
        "server problem",
    ),
}

REFUSALS_RUN: dict[str, Prompt] = {**COMMANDS, **DELEGATE, **GIT, **MCP}
