"""Rewind: what the agent changed in the workspace, step by step, and the way back.

Before every action that may change the workspace (an edit, a command, a delegate, a goal
check) the workspace as it is then is in the snapshot store (`store`): each file's content
once, by its SHA-256, in `.agent_context/snapshots/`. A `snapshot` record is journaled
before the action starts, and a `changes` record after it, naming each file it changed
with its content before and after (`tree` compares the workspace with the store's view of
it, file times first, contents only where a time moved). Changes made outside the agent
between two actions are journaled too, as such. From these records `diff` shows each
action's changes and `restore` puts files back as they were before a step.

Not snapshotted: `.git` (the user's repository is never read or written), `.agent_context`,
virtual environments and caches (the folders `fingerprint` skips), symbolic links, and
empty folders. A file over `tree.BIG_FILE` bytes is recorded by its size and time only:
its change is shown, but it cannot be restored.
"""
