"""The agent loop: prepare a run, plan, act, guard against loops, end (SPEC §6, §7)."""
