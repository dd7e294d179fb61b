"""Seeing what the agent did, read from the journal only: the trace (`trace.py`), the
Mermaid graphs (`graph.py`), the live view (`watch.py`), the records as JSON lines for
other programs (`events.py`) and the list of workspaces (`listing.py`). Nothing here writes
to `.agent_context/`."""
