"""Debian's bash-static under trapline behaves as it does natively (both arches).

Only single-process scripts for now: every construct below runs inside one bash process
(builtins, arithmetic, loops, printf); nothing forks or execs a child.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    assert_same_behaviour,
    check_native_oracle,
    run_native,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

BASH = "/bin/bash"


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    status: int = 0
    stdin: bytes = b""
    # Compare only the first line of stdout (bash --version continues with licence text
    # that is the same, but the first line is what identifies the build).
    first_line_only: bool = False


CASES = (
    Case("echo-arith", (BASH, "-c", "echo hi; x=3; echo $((x*7))")),
    Case("version", (BASH, "--version"), first_line_only=True),
    Case("for-loop", (BASH, "-c", "for i in 1 2 3; do echo $i; done")),
    Case("printf", (BASH, "-c", 'printf "%s\\n" a b')),
    Case("exit-status", (BASH, "-c", "exit 7"), status=7),
    Case("false-status", (BASH, "-c", "false"), status=1),
    Case("functions-strings", (BASH, "-c",
         'f() { local s=$1; echo "${#s} ${s^^} ${s:1:3} ${s/l/L}"; }; f hello; f world')),
    Case("arrays", (BASH, "-c", 'a=(z y x); a+=(w); echo "${#a[@]} ${a[*]} ${!a[@]}"')),
    Case("read-stdin", (BASH, "-c", 'while read -r l; do echo "<$l>"; done'),
         stdin=b"one\ntwo words\n"),
    Case("env-and-args", (BASH, "-c", 'echo "$0 $# $2 $HOME $PATH"', "name", "p1", "p2")),
    Case("syntax-error", (BASH, "-c", "if then"), status=2),
    Case("cd-pwd", (BASH, "-c", "cd /work/tree/sub && echo $PWD; cd ..; pwd")),
    Case("test-builtins", (BASH, "-c",
         '[[ -f /work/lines.txt && ! -e /nope ]] && echo yes; [ 3 -gt 2 ]; echo $?')),
)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_bash_matches_native(arch, case, rootfs_for, native_arch):
    native = run_native(list(case.argv), rootfs_dir=rootfs_for(native_arch[arch]),
                        env=FIXED_ENV, stdin=case.stdin)
    check_native_oracle(native, case.status)
    sandbox = run_sandbox(list(case.argv), rootfs=rootfs_for(arch), env=FIXED_ENV,
                          clear_env=True, stdin=case.stdin)
    if case.first_line_only:
        native = _first_line(native)
        sandbox = _first_line(sandbox)
    assert_same_behaviour(sandbox, native)


def _first_line(result):
    return replace(result, stdout=result.stdout.split(b"\n", 1)[0])
