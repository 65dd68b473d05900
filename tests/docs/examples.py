"""The examples of the documentation: the ```console blocks of README.md and docs/**/*.md.

A console block is a terminal session as a user would type it:

    ```console
    $ trapline run -- samples/bin/x86_64/fib 10
    fib(10) = 55
    ```

Each `$ ` line is a command (a line ending in a backslash goes on on the next line, and a here
document `<<'EOF'` takes the lines up to its terminator); the lines after it, up to the next
command, are what the terminal shows (stdout and stderr together).
A line that is only `...` stands for any number of lines, and `...` inside a line for any text
on that line, as doctest's ELLIPSIS: for output too long to show whole, never for output that
changes from run to run (trapline's output does not). Blocks of other languages (```sh,
```python, ```text) are shown, not run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`]*)$")
PROMPT = "$ "


@dataclass(frozen=True)
class Example:
    path: Path          # the Markdown file
    line: int           # 1-based line of the command
    command: str
    expected: str       # what the terminal shows, '' when the block shows nothing after it

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def console_blocks(path: Path) -> list[tuple[int, list[str]]]:
    """(line of the block's first content line, its lines) for every ```console block."""
    blocks, lines, start, indent = [], None, 0, ""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = FENCE.match(text)
        if lines is None:
            if fence and fence["info"].strip().split(" ")[0] == "console":
                lines, start, indent = [], number + 1, fence["indent"]
        elif fence and fence["info"].strip() == "" and fence["indent"] == indent:
            blocks.append((start, lines))
            lines = None
        else:
            lines.append(text[len(indent):] if text.startswith(indent) else text)
    if lines is not None:
        raise ValueError(f"{path}:{start - 1}: a console block is not closed")
    return blocks


def examples(path: Path) -> list[Example]:
    found = []
    for start, lines in console_blocks(path):
        index = 0
        if lines and not lines[0].startswith(PROMPT):
            raise ValueError(f"{path}:{start}: a console block starts with a command ('$ ...')")
        while index < len(lines):
            line_number = start + index
            command = lines[index][len(PROMPT):]
            index += 1
            while command.endswith("\\") and index < len(lines):
                command = command + "\n" + lines[index]        # bash joins the lines itself
                index += 1
            heredoc = HEREDOC.search(command)
            if heredoc:
                while index < len(lines):
                    command += "\n" + lines[index]
                    index += 1
                    if lines[index - 1].strip() == heredoc[1]:
                        break
            output = []
            while index < len(lines) and not lines[index].startswith(PROMPT):
                output.append(lines[index])
                index += 1
            found.append(Example(path, line_number, command, "\n".join(output)))
    return found


def pattern(expected: str) -> re.Pattern:
    """The expected text as a regular expression: `...` lines and `...` in lines are wildcards."""
    parts = []
    for line in expected.split("\n"):
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        pieces = [re.escape(piece) for piece in line.rstrip().split("...")]
        parts.append("[^\n]*?".join(pieces) + r"[ \t]*\n")
    return re.compile("".join(parts))


def matches(expected: str, actual: str) -> bool:
    if expected.strip() == "":
        return True                    # a command shown without output: it must only run
    text = "\n".join(line.rstrip() for line in actual.rstrip("\n").split("\n")) + "\n"
    return pattern(expected.rstrip("\n")).fullmatch(text) is not None
