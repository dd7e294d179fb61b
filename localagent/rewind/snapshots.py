"""The hooks a run calls around each step that may change the workspace.

`before` journals a `snapshot` record before the step starts: the store then holds every
file of the workspace as it is (the first one copies the whole workspace, later ones only
what moved), and whatever changed since the last step, outside the agent, is named in it.
`settle` journals the step's `changes` once it ended, or, after a crash, once the resumed
run settles the step it interrupted (the state's `unsettled` says which step that is, so
a step is never snapshotted twice nor its changes lost). An edit tool's step looks only
at the paths it names; a command's, a delegate's, a goal check's, at the whole workspace.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from localagent.journal import Journal
from localagent.journal.snapshots import Tree
from localagent.rewind.tree import changes, scan, under
from localagent.system.errors import JournalCorrupt, UsageError
from localagent.tools import Tool
from localagent.tools.base import ToolError
from localagent.tools.paths import relative, resolve_in_workspace

log = logging.getLogger("localagent.loop.agent")
FILE_KINDS = ("changes", "snapshot", "rewound")  # the records that name files changed
PER_RECORD = 5000  # files named in one record


class Snapshots:
    def __init__(self, journal: Journal, root: Path, max_bytes: int) -> None:
        self.journal = journal
        self.root = root
        self.store = journal.snapshot_store(max_bytes)
        self._tree: Tree | None = None

    def refuse_half_rewound(self) -> None:
        """A run never works in a workspace a killed rewind left half put back."""
        if self.journal.state.rewinding is not None:
            raise UsageError(
                "a rewind of this workspace was cut short; finish it first with: "
                f"localagent rewind -w {self.root}"
            )

    def scope(self, tool: Tool, args: dict[str, Any]) -> list[str] | None:
        """The paths an edit tool names (it changes nothing else); None for the rest."""
        if tool.policy.spawns or not tool.policy.paths or not isinstance(args, dict):
            return None  # a malformed call is refused by the tool; scope it all the same
        paths = []
        for key in tool.policy.paths:
            value = args.get(key)
            if not isinstance(value, str):
                continue
            try:
                path = resolve_in_workspace(self.root, value)
            except (ToolError, OSError, ValueError):
                continue  # the tool refuses it too
            paths.append(relative(self.root, path).replace("\\", "/"))
        return None if any(p in ("", ".") for p in paths) else paths

    def before(self, tool: str, round_: int, scope: list[str] | None = None) -> None:
        """Journal the `snapshot` record a step needs before it starts."""
        if not self._usable():
            return
        tree = self._current()
        if tree is None:  # the first step: the whole workspace, copied once
            files, _ = scan(self.root, self.store, {}, None, durable=False)
            tree = Tree(files=files)
            found: list[Any] = []
            base = len(files)
        else:
            files, added = scan(self.root, self.store, tree.files, scope)
            tree.stored += added
            found = changes(tree.files, files, scope)
            base = None
        unsettled = self.journal.state.unsettled
        if found and unsettled is not None:  # a step a crash cut short changed them
            self._journal_changes(unsettled.seq, unsettled.tool, unsettled.round, found, late=True)
            found = []
        extra = {"base": base} if base is not None else {}
        while len(found) > PER_RECORD:  # a record stays far below what a torn write can be
            self.journal.append("snapshot", tool=tool, round=round_, files=found[:PER_RECORD])
            found = found[PER_RECORD:]
        self.journal.append("snapshot", tool=tool, round=round_, scope=scope, files=found, **extra)
        self._keep(tree, files, None if base is not None else scope, save=base is not None)

    def settle(self) -> None:
        """Journal the `changes` of the step snapshotted last, if not yet done."""
        unsettled = self.journal.state.unsettled
        if unsettled is None or not self._usable():
            return
        tree = self._current()
        if tree is None:
            files, found = {}, []
        else:
            files, added = scan(self.root, self.store, tree.files, unsettled.scope)
            tree.stored += added
            found = changes(tree.files, files, unsettled.scope)
        self._journal_changes(unsettled.seq, unsettled.tool, unsettled.round, found)
        if tree is not None:
            self._keep(tree, files, unsettled.scope)
            self.store.prune(tree)

    def current(self) -> Tree:
        """The store's view of the workspace (empty before the first snapshot)."""
        assert self.store is not None
        return self._current() or Tree()

    def follow(self, rec: dict[str, Any]) -> None:
        """The store's view after a record that changed files (a rewind's)."""
        tree = self._current()
        if tree is not None:
            _catch_up(tree, rec)
            self._keep(tree, {}, [])

    def look(self, scope: list[str] | None = None) -> tuple[Tree, dict[str, list[Any]]]:
        """The store's view of the workspace and the workspace now (contents stored)."""
        assert self.store is not None
        tree = self._current() or Tree()
        files, added = scan(self.root, self.store, tree.files, scope)
        tree.stored += added
        return tree, files

    def _usable(self) -> bool:
        """Whether the store can be used; a store that cannot be made (a full or read-only
        disk) turns snapshots off for the run, loudly, rather than end it."""
        if self.store is None:
            return False
        try:
            self.store.ensure()
        except OSError as exc:
            log.warning("snapshots are off for the rest of this run: %s", exc)
            self.store = None
        return self.store is not None

    def _journal_changes(
        self, seq: int, tool: str, round_: int, found: list[Any], late: bool = False
    ) -> None:
        extra = {"late": True} if late else {}
        while len(found) > PER_RECORD:  # the last one settles the step
            part, found = found[:PER_RECORD], found[PER_RECORD:]
            self.journal.append(
                "changes", action=seq, tool=tool, round=round_, files=part, more=True, **extra
            )
        self.journal.append("changes", action=seq, tool=tool, round=round_, files=found, **extra)
        if found:
            log.info("step %d (%s) changed %d files", seq, tool, len(found))

    def _keep(
        self, tree: Tree, files: dict[str, list[Any]], scope: list[str] | None, save: bool = True
    ) -> None:
        """The view as of the record just journaled; saved once a step is settled (a view
        saved behind the journal is caught up from it)."""
        assert self.store is not None
        if scope is None:
            tree.files = dict(files)
        else:
            for path in under(tree.files, scope):
                del tree.files[path]
            tree.files.update(files)
        self._tree = tree
        if not save:
            return
        tree.seq = self.journal.state.seq
        tree.offset = self.journal.state.history_offset
        try:
            self.store.save_tree(tree)
        except OSError as exc:  # only a cache: the next run catches up from the journal
            log.warning("could not save the snapshot store's tree: %s", exc)

    def _current(self) -> Tree | None:
        """The store's view, caught up with records journaled after it was saved."""
        assert self.store is not None
        if self._tree is not None:
            return self._tree
        self.store.ensure()
        self.store.remove_temps()
        tree = self.store.load_tree()
        if tree is None or tree.seq > self.journal.state.seq:
            return None
        try:
            for rec, _ in self.journal.records_after(tree.offset):
                if rec["seq"] > tree.seq and rec["type"] in FILE_KINDS:
                    _catch_up(tree, rec)
        except (JournalCorrupt, OSError):
            return None
        self._tree = tree
        return tree


def _catch_up(tree: Tree, rec: dict[str, Any]) -> None:
    for path, _, after in rec.get("files") or []:
        if after is None:
            tree.files.pop(path, None)
        else:
            tree.files[path] = [-1, -1, after]  # size unknown: the next scan reads it again
