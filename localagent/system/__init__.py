"""What the loop stands on: processes, sandbox, locks, safe file access, signals, errors."""
