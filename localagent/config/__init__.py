"""The settings: each one's type and default, where values come from, what a run journals."""
