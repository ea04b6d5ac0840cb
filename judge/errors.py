"""The one family of exceptions that means "the user asked for something that cannot be done".

The CLI turns any `JudgeError` into a one-line red message and exit code 2. Everything else is a bug
in the judge and keeps its traceback.
"""


class JudgeError(Exception):
    """A usage error: a bad path, a typo in an id, a malformed file."""


class SpecError(JudgeError):
    """A puzzle.yaml that cannot be loaded: the message names the file and the key."""


class UnknownPuzzle(JudgeError):
    """A puzzle id that the registry does not know."""


class SubmissionNotFound(JudgeError):
    """A submission path that is not a readable file."""
