"""The journal: the only code that reads or writes `WORKSPACE/.agent_context/`.

`history.jsonl` is the write-ahead log (one checksummed orjson record per line, fsynced
before `append` returns); `state.json` is a snapshot of the state folded from it, with
the `seq` and byte offset it covers, so loading reads only the records after it.

Only a crash in the middle of an append is repaired without asking: it leaves a partial
last line (or a last line the filesystem never wrote, read back as NUL bytes). Anything
else (complete lines that fail their checksum, a gap, a history shorter than the
snapshot says) is damage: loading refuses it with `JournalCorrupt` until the user
accepts the loss (`load(accept_loss=True)`, behind `localagent resume --repair`).
Files in `.agent_context/` are opened through `safefs`: never through a symlink, never
a FIFO or a device.

The package: `codec` turns records into checksummed lines and back, `disk` is the seam
every write goes through, `files` is the folder itself (planted-file checks, the files
other modules open, stop requests), `replay` loads and repairs, `reading` reads the
history without loading it, `seals` says whose journal it is (and seals it anew when the
user adopts another agent's), `archive` puts a finished goal's files away, and `journal`
holds the `Journal`. `registry` is the user's index of workspaces with a goal (`list`,
`resume --all`), kept in the user data folder, not in any `.agent_context/`.
"""

from localagent.journal.archive import KEPT_BY_ARCHIVE
from localagent.journal.codec import (
    MAX_DEPTH,
    MAX_TORN,
    decode,
    encodable,
    encode,
    is_torn,
    now_iso,
)
from localagent.journal.disk import Disk
from localagent.journal.files import (
    ARCHIVE_DIR,
    CONTEXT_DIR,
    JOURNAL_FILES,
    QUESTIONS_DIR,
    TEMP_FILES,
    resume_hint,
)
from localagent.journal.journal import SNAPSHOT_AFTER, Journal
from localagent.journal.replay import SNAPSHOT_EVERY

__all__ = [
    "ARCHIVE_DIR",
    "CONTEXT_DIR",
    "JOURNAL_FILES",
    "KEPT_BY_ARCHIVE",
    "MAX_DEPTH",
    "MAX_TORN",
    "QUESTIONS_DIR",
    "SNAPSHOT_AFTER",
    "SNAPSHOT_EVERY",
    "TEMP_FILES",
    "Disk",
    "Journal",
    "decode",
    "encodable",
    "encode",
    "is_torn",
    "now_iso",
    "resume_hint",
]
