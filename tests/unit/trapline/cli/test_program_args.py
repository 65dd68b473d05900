"""How the commands that run a program split their own options from the program's (issue 26):
trapline's options end at the program's name or at `--`, as strace's do; an option before that
which the command does not have is an error naming it, status 2, and nothing runs."""
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.cli import main

ROOT = Path(__file__).resolve().parents[4]
PROGRAM_COMMANDS = {"run": [], "trace": ["-p", "proc:exit"], "profile": [],
                    "gdbserver": ["--stdio"]}


@pytest.mark.parametrize("command,option", [
    # (the issue's `run -o F` is strace's -o FILE now: tests/unit/trapline/cli/test_strace_options.py)
    *((command, option) for command in sorted(PROGRAM_COMMANDS) for option in ("-O", "--bogus"))])
def test_an_unknown_option_before_the_program_is_a_usage_error_naming_it(command, option):
    """`trapline run --strace -o F -- prog` said 'cannot run CWD/-o: ENOENT' (exit 127)."""
    argv = [command, *PROGRAM_COMMANDS[command], "--strace", option, "F", "--", "/bin/true"]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert "No such option" in result.output and option in result.output
    assert f"{command} --help' for help." in result.output
    assert "cannot run" not in result.output


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("argv", [
    ["run", "--clear-env", "{prog}", "-l", "-v", "--", "x"],    # after the name: all the program's
    ["run", "--clear-env", "--", "{prog}", "-l", "--strace"],   # after --: the same
])
def test_the_programs_own_options_pass_through(arch, argv):
    """Options after the program's name are its own even where trapline has the same (-v,
    --strace): neither turns on trapline's verbosity or strace."""
    prog = str(ROOT / "samples" / "bin" / arch / "args_env")
    argv = [a.format(prog=prog) for a in argv]
    done = subprocess.run([sys.executable, "-m", "trapline", *argv], capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode()
    args = argv[argv.index(prog) + 1:]
    assert done.stdout.decode().splitlines() == [f"argc={len(args) + 1}", f"argv[0]={prog}",
                                                 *(f"argv[{i}]={a}" for i, a in enumerate(args, 1))]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_program_named_without_a_slash_is_found_in_the_guests_path(arch):
    """`trapline run -- ls` said 'cannot run CWD/ls: ENOENT': a name is looked up in PATH, as
    execvp does (kernel_model/path_search.py), here without a rootfs (the host's / read-only)."""
    folder = ROOT / "samples" / "bin" / arch
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "-E", f"PATH=/nothing:{folder}",
                           "--", "args_env"], capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.startswith(b"argc=1\nargv[0]=args_env\n")


def test_a_name_not_in_the_path_is_one_line_and_status_127():
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "-E", "PATH=/nothing:/neither",
                           "--", "args_env"], capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 127
    assert done.stderr.decode().splitlines() == [
        "trapline: cannot run args_env: ENOENT (not found in PATH /nothing:/neither)"]
