"""Errors a user can act on. The CLI prints them without a traceback."""


class PipelineError(Exception):
    """A problem with the user's input or settings; the message says what and how to fix it."""


class InputError(PipelineError):
    """An input file cannot be used at all (no usable rows, no abstract column, unreadable)."""
