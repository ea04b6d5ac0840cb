"""The puzzle catalogue: one directory per puzzle (puzzle.yaml, template.py, reference.py)."""
