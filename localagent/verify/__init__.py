"""Verified completion (SPEC §11): evidence from the journal, goal checks, the verdict.

The ledger these read (what the journal shows was written, read and checked) is part of
the state (`localagent.state.ledger`): folding records needs no model and no workspace.

- `evidence`: the gate a subtask's completion claim must pass, with no model call;
- `claims`: when a failure claim is refused (nothing tried, or an earlier subtask's news);
- `where`: where a file a text names is in the workspace (exact path, else a unique match);
- `checks`: the goal checks a workspace calls for, and running one through the guarded
  command runner;
- `verdict`: the deterministic verdict, and the structured model call that can only
  downgrade it.
"""
