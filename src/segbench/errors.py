"""The one exception type that reaches users: it names the file, frame or field at fault."""


class SegbenchError(Exception):
    """A problem with the user's input (data, checkpoint, config); printed without a traceback."""


class AuditFailed(SegbenchError):
    """The dataset audit found errors; evaluation must not start."""
