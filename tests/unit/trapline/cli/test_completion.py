"""Shell completion of the `trapline` command (click's: the shell asks the command itself
through _TRAPLINE_COMPLETE): `eval "$(_TRAPLINE_COMPLETE=bash_source trapline)"` in bash,
zsh_source and fish_source likewise. Bash runs the sourced function as it would on TAB, on a
`trapline` script that starts this checkout's entry point (trapline/entry.py) as the console
script does; the lazily imported commands (explain, experiment...) complete too."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
ENTRY = "import sys; sys.argv[0] = 'trapline'; from trapline.entry import run; run()"


@pytest.fixture(scope="module")
def trapline_on_path(tmp_path_factory) -> dict:
    """An environment whose PATH has a `trapline` that is this checkout's."""
    folder = tmp_path_factory.mktemp("bin")
    script = folder / "trapline"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{ENTRY}" "$@"\n')
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}


def _complete(env: dict, *words: str) -> list[str]:
    """What bash's TAB offers after `words` (the last one being completed): bash calls the
    function with the command's name as $1."""
    line = " ".join(f"'{w}'" for w in words)
    script = (f'eval "$(_TRAPLINE_COMPLETE=bash_source trapline)"; COMP_WORDS=({line}); '
              f'COMP_CWORD={len(words) - 1}; _trapline_completion trapline; printf "%s\\n" "${{COMPREPLY[@]}}"')
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completes_commands_options_and_choices(trapline_on_path):
    assert _complete(trapline_on_path, "trapline", "ex") == ["experiment", "explain"]
    assert {"--strace", "--string-limit", "--strings-in-hex"} == set(
        _complete(trapline_on_path, "trapline", "run", "--str"))
    assert _complete(trapline_on_path, "trapline", "run", "-X", "") == ["raw", "abbrev", "verbose"]
    assert "--technique" in _complete(trapline_on_path, "trapline", "explain", "--tech")


@pytest.mark.parametrize(("shell", "marker"), [
    ("bash", "complete -o nosort -F _trapline_completion trapline"),
    ("zsh", "compdef _trapline_completion trapline"),
    ("fish", "complete --no-files --command trapline")])
def test_each_shell_gets_its_script(trapline_on_path, shell, marker):
    env = {**trapline_on_path, "_TRAPLINE_COMPLETE": f"{shell}_source"}
    done = subprocess.run(["trapline"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and marker in done.stdout, done.stdout + done.stderr
