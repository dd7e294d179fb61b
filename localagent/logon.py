"""`python -m localagent.logon`: what the Windows logon task runs.

Registered tasks name this module, so it stays where it is; the work is done by
`localagent.daemon.logon`.
"""

import sys

from localagent.daemon.logon import run_at_logon

if __name__ == "__main__":
    sys.exit(run_at_logon())
