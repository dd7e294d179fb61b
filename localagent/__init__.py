"""localagent: a local-first autonomous coding agent driven by an Ollama model."""

__version__ = "0.1.0"
