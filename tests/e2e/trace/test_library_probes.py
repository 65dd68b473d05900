"""Probes on shared libraries (issue 14): `uprobe:libc.so.6:malloc`, a probe pending until
dlopen maps its library, return probes in libc, in the parent and in a fork child.

The guest is a small C program linked dynamically against the host's glibc with gcc. Its
own behaviour is the oracle: it calls malloc N times in a loop (N from argv, the pointer
kept volatile so the calls stay), dlopens libm.so.6 and calls cbrt three times, forks a child
that calls cbrt once more, and parses numbers with strtol. glibc itself calls malloc a few
times (dlopen allocates), so the malloc count is checked differentially: N more calls give
exactly N more hits.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.e2e.forkserver import run_trapline

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
static void say(const char *s) { while (*s) write(1, s++, 1); }
int main(int argc, char **argv) {
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 0;
    for (int i = 0; i < n; i++) { void *volatile p = malloc(16 + i); free(p); }
    size_t (*volatile length)(const char *) = strlen;      /* an IFUNC: resolved by ld.so */
    size_t total = 0;
    for (int i = 2; i < argc; i++) total += length(argv[i]);
    void *libm = dlopen("libm.so.6", RTLD_NOW);
    if (!libm) { say("no libm\n"); return 1; }
    double (*cube_root)(double) = (double (*)(double))dlsym(libm, "cbrt");
    volatile double sum = 0;
    for (int i = 0; i < 3; i++) sum += cube_root(i);
    pid_t child = fork();
    if (child == 0) { sum += cube_root(8.0); _exit((int)strtol("7", NULL, 10)); }
    int status;
    waitpid(child, &status, 0);
    say(sum > 0 && total < 1000 ? "ok\n" : "bad\n");
    return WEXITSTATUS(status) == 7 ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("libprobes")
    (folder / "lp.c").write_text(PROGRAM)
    subprocess.run(["gcc", "-O1", "-o", "lp", "lp.c"], cwd=folder, check=True)
    return folder / "lp"


def _trace(program: Path, n: int, *probes: str, args: tuple[str, ...] = ()) -> tuple[list[dict], bytes]:
    command = ["python3", "-m", "trapline", "trace", "--format", "jsonl", "--clear-env"]
    for probe in probes:
        command += ["-p", probe]
    done = subprocess.run(command + ["--", str(program), str(n), *args], capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout.endswith(b"ok\n") or b"ok\n" in done.stdout, done.stdout
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith(b"{")]
    return events, done.stderr


def _hits(events: list[dict], probe: str) -> list[dict]:
    return [e for e in events if e["probe"] == probe]


def test_malloc_probe_counts_every_call(program: Path):
    probe = "uprobe:libc.so.6:malloc"
    few, _ = _trace(program, 0, probe)
    many, _ = _trace(program, 25, probe)
    assert len(_hits(many, probe)) - len(_hits(few, probe)) == 25
    assert len({e["addr"] for e in _hits(many, probe)}) == 1


def test_records_name_the_library(program: Path):
    done = run_trapline(["trace", "--clear-env", "-p",
                         "uprobe:libc.so.6:malloc", "--", str(program), "1"], timeout=300)
    assert done.returncode == 0, done.stderr
    assert b" libc.so.6:malloc args=" in done.stdout


def test_probe_pending_until_dlopen_and_in_the_fork_child(program: Path):
    probe = "uprobe:libm.so.6:cbrt"
    events, _ = _trace(program, 0, probe)
    hits = _hits(events, probe)
    by_pid: dict[int, int] = {}
    for event in hits:
        by_pid[event["pid"]] = by_pid.get(event["pid"], 0) + 1
    assert sorted(by_pid.values()) == [1, 3], by_pid          # child once, parent three times


def test_return_probe_in_libc_reports_return_values(program: Path):
    probe = "uretprobe:libc.so.6:strtol"
    events, _ = _trace(program, 4, probe)
    assert sorted(e["retval"] for e in _hits(events, probe)) == [4, 7]


def test_probes_on_an_ifunc_fire_at_the_implementation_ld_so_picked(program: Path):
    """strlen is an IFUNC: entry and return probes wait for its resolver and go where it
    points. Two more strlen calls of known lengths give two more hits with those values."""
    entry, ret = "uprobe:libc.so.6:strlen", "uretprobe:libc.so.6:strlen"
    base, _ = _trace(program, 0, entry, ret)
    more, _ = _trace(program, 0, entry, ret, args=("hello", "tracing!"))
    assert len(_hits(more, entry)) - len(_hits(base, entry)) == 2
    extra = sorted(e["retval"] for e in _hits(more, ret))
    for value in sorted(e["retval"] for e in _hits(base, ret)):
        extra.remove(value)
    assert extra == [5, 8]


def test_an_ifunc_probe_enabled_after_its_resolver_ran_goes_where_it_resolved(program: Path):
    """strlen's resolver runs while ld.so relocates, before main: a probe on strlen enabled
    at main's instruction count (--enable-at) is placed at the implementation the resolver
    returned then, and sees the program's two more strlen calls on two more arguments."""
    from instrumenter.probes.definitions import Probe
    from trapline import Sandbox
    from trapline.probespec import parse_probe_spec
    reached = []
    at_main = Probe(parse_probe_spec("uprobe:lp:main"), action=lambda ctx: reached.append(ctx.timestamp))
    Sandbox(probes=[at_main], clear_env=True).run([str(program), "0"])

    def strlen_hits(*args: str) -> int:
        late = Probe(parse_probe_spec("uprobe:libc.so.6:strlen"), enable_at=reached[0])
        Sandbox(probes=[late], clear_env=True).run([str(program), "0", *args])
        return late.hits
    assert reached and strlen_hits("hello", "tracing!") - strlen_hits() == 2


def test_an_ifunc_probe_first_added_after_ld_so_bound_it_is_read_from_the_got(program: Path):
    """Nobody watched strlen's resolver: the probe is first added by main's action
    (Session.add_probe), after ld.so stored the implementation in the GOT slot of the program's
    `length = strlen`. It is placed where that slot (and libc's own IRELATIVE slots) point, and
    sees exactly the program's strlen calls on its arguments: two more arguments, two more hits."""
    from instrumenter.probes.definitions import Probe
    from trapline import Sandbox
    from trapline.probespec import parse_probe_spec

    def strlen_hits(*args: str) -> tuple[int, list]:
        late = Probe(parse_probe_spec("uprobe:libc.so.6:strlen"), nargs=1)
        sessions = []

        def add_late(ctx):
            if late not in sessions[0].probes:
                sessions[0].add_probe(late)
        at_main = Probe(parse_probe_spec("uprobe:lp:main"), action=add_late)
        result = Sandbox(probes=[at_main], clear_env=True,
                         on_start=lambda kernel, proc, session: sessions.append(session)).run(
            [str(program), "0", *args])
        assert result.stdout.endswith(b"ok\n")
        return late.hits
    assert strlen_hits("hello", "tracing!") - strlen_hits() == 2
