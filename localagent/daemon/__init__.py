"""Everything that runs across processes: the background agent and what talks to it.

- `background`: the background agent's entry point (`python -m localagent run-agent`),
  which imports only what a run uses;
- `spawn`: starting it detached (`detach` does the OS part) and waiting until it has
  passed its preflight or failed it;
- `stop`: asking it to stop from another process;
- `logs`: following its log;
- `resume`: `resume --all`, every interrupted goal one after another;
- `autostart` and `logon`: running `resume --all` at logon on each system.

The modules are imported one by one (nothing is imported here), so the background
agent does not load the rest.
"""
