"""args.NAME in a uprobe on a real guest: a program built with the host's gcc -g (its DWARF names
greet's parameters) prints, through the probe, the values main passes, on both arches; a binary
without DWARF gets the one-line reason before the run."""
import pytest

from tests.e2e.lang.lang_run import ARCHES, ROOT, sample, trace
from tests.unit.trapline.lang.gcc_program import GREET_CALLS, build

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arch", ARCHES)
def test_named_arguments_are_the_values_passed(arch, tmp_path):
    program = build(tmp_path, arch)
    done = trace("-e", f'uprobe:{program}:greet {{ printf("%d %s\\n", args.n, str(args.name)); '
                 f'printf("%u %d %d\\n", args.tag, args.big, args.colour); }}', "--", program)
    expected = []
    for n, name, tag, big, colour in GREET_CALLS:
        expected += [f"{n} {name}", f"{tag} {big} {colour}"]
    lines = done.stdout.rstrip("\n").splitlines()           # (bpftrace's two newlines at exit)
    assert lines[:-1] == expected
    assert lines[-1].lstrip("-").isdigit()         # the program's own line


@pytest.mark.parametrize("arch", ARCHES)
def test_without_dwarf_the_reason(arch):
    fib = sample(arch, "fib")
    done = trace("-e", f'uprobe:{fib}:fib {{ printf("%d\\n", args.n); }}', "--", fib, "3", check=False)
    assert done.returncode == 2
    assert f"{fib} has no DWARF for fib (build it with -g), use arg0..argN" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("arch", ARCHES)
def test_a_binary_named_as_mapped_is_read_at_its_first_hit(arch, tmp_path):
    """uprobe:NAME:FUNC with NAME no host file where trapline runs: the DWARF of the object the
    run maps under that name is read at the first hit (the program's, or fib's, which has none:
    reported once, counted)."""
    program = build(tmp_path, arch)
    done = trace("-e", f'uprobe:greet-{arch}:greet {{ printf("%d\\n", args.n); }}', "--", program,
                 cwd=ROOT)
    assert done.stdout.rstrip("\n").splitlines()[:-1] == [str(call[0]) for call in GREET_CALLS]
    fib = sample(arch, "fib")
    done = trace("-e", 'uprobe:fib:fib { @[args.n] = count(); }', "--", fib, "3", cwd=ROOT)
    assert done.stdout.splitlines()[0] == "fib(3) = 2" and "@" not in done.stdout
    assert f"{fib} has no DWARF for fib (build it with -g)" in done.stderr
    assert "(build it with -g), use arg0..argN: 5 hits in all" in done.stderr
