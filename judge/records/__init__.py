"""Results kept and graded: the SQLite store, class grading, gradebook formats, catalogue rows."""
