"""The probe language's errors: where in the program, what is wrong, with the line and a caret
under the column, as bpftrace prints them:

    -e:1:24: ERROR: unknown function 'cout'
    uprobe:/bin/ls:main { cout(); }
                          ^
"""
from ..errors import UsageError


class ProgramError(UsageError):
    """A syntax or semantic error: the run does not start."""

    def __init__(self, source: str, name: str, line: int, column: int, message: str):
        self.line, self.column, self.message = line, column, message
        super().__init__(caret_message(source, name, line, column, message))


class RuntimeActionError(Exception):
    """An action failed on one hit (division by zero, a bad map key): the hit's action stops,
    the guest runs on, the consumer reports it (consumer.py)."""

    def __init__(self, node, message: str):
        self.node, self.message = node, message
        super().__init__(message)


def caret_message(source: str, name: str, line: int, column: int, message: str) -> str:
    lines = source.splitlines() or [""]
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return f"{name}:{line}:{column}: ERROR: {message}\n{text}\n{' ' * (column - 1)}^"


class StopAction(Exception):
    """exit() ends this consumer: the rest of the action does not run."""
