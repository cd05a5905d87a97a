"""The project's own commands (the docs build's notebook step), run from the repository root."""
