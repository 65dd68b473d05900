"""Several consumers in one run (US 7,350,196 FIG. 1), each with its own maps and output, enabling
the same probe; one's exit() or error stops none of the others and never the guest; bad input
is reported as bpftrace reports it."""
import pytest

from tests.e2e.lang.lang_run import ARCHES, maps, sample, trace

pytestmark = pytest.mark.e2e


@pytest.fixture(params=ARCHES)
def fib(request) -> str:
    return sample(request.param, "fib")


def test_two_consumers_on_one_probe_one_exits_early(fib, tmp_path):
    second = tmp_path / "second.bt"
    second.write_text(f"// a file consumer\nuprobe:{fib}:fib\n{{\n  @b = count();\n}}\n"
                      "END { printf(\"second end\\n\"); }\n")
    done = trace("-e", f'uprobe:{fib}:fib {{ @a = count(); if (@a == 5) {{ exit(); }} }} '
                 'END { printf("first end\\n"); }', str(second), "--", fib, "10")
    # the first consumer ends at its fifth hit, with its END and its map, before the guest's
    # output; the second sees every call and prints at the end (each: two newlines, then its
    # maps, as bpftrace v0.23.0 ends a run)
    assert done.stdout == "first end\n\n\n@a: 5\nfib(10) = 55\nsecond end\n\n\n@b: 177\n"
    assert "Attaching 4 probes..." in done.stderr


def test_an_error_in_one_consumer_leaves_the_other_and_the_guest(fib):
    plain = trace("-e", "BEGIN { }", "--", fib, "10")
    done = trace("-e", f"uprobe:{fib}:fib /arg0 == 3/ {{ @z = 1 / (arg0 - 3); @after = count(); }}",
                 "-e", f"uprobe:{fib}:fib {{ @n = count(); }}", "--", fib, "10")
    assert done.stdout.splitlines()[0] == plain.stdout.splitlines()[0] == "fib(10) = 55"
    assert maps(done.stdout) == {"@n": {"": "177"}}          # @after never counted
    lines = done.stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if "division by zero" in line)
    assert lines[first].startswith("trapline: -e:1:")
    assert f"uprobe:{fib}:fib: division by zero" in lines[first]
    assert lines[first + 2].endswith("^")
    assert any("division by zero: 21 hits in all" in line for line in lines)


def test_attach_points_that_find_nothing_are_reported_at_the_end(fib):
    done = trace("-e", f"uprobe:{fib}:nosuch {{ @x = count(); }} uprobe:libnothere.so.1:f {{ }} "
                 f"uprobe:{fib}:fib {{ @n = count(); }}", "--", fib, "5")
    assert done.returncode == 0 and "fib(5) = 5" in done.stdout and "@n: 15" in done.stdout
    assert f"trapline: uprobe:{fib}:nosuch: no function matched in {fib}" in done.stderr
    assert "trapline: uprobe:libnothere.so.1:f: no object named libnothere.so.1 was mapped" in done.stderr


def test_a_syntax_error_stops_before_the_guest(fib):
    done = trace("-e", "BEGIN { @x = ; }", "--", fib, "5", check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["trapline: -e:1:14: ERROR: syntax error, unexpected ';'",
                                        "BEGIN { @x = ; }", " " * 13 + "^"]


def test_the_output_is_the_same_every_run(fib):
    """Virtual time: nsecs, elapsed and the maps are byte-identical from run to run."""
    program = (f'uprobe:{fib}:fib /arg0 > 6/ {{ printf("%d %d %d %s\\n", nsecs, elapsed, arg0, comm); '
               f'@t[arg0] = max(nsecs); }} tracepoint:syscalls:sys_exit_* {{ @r[probe] = stats(retval); }}')
    first = trace("-e", program, "--", fib, "10")
    again = trace("-e", program, "--", fib, "10")
    assert first.stdout == again.stdout and first.stderr == again.stderr
    stamps = [int(line.split()[0]) for line in first.stdout.splitlines()[:5]]
    assert stamps == sorted(stamps) and stamps[0] > 0


def test_output_to_a_file_of_its_own(fib, tmp_path):
    """-o FILE: the consumers' lines go there (kept for one write: a file of their own), the
    guest's own output stays on stdout."""
    records = tmp_path / "out.txt"
    done = trace("-o", str(records), "-e", f'uprobe:{fib}:fib {{ printf("%d\\n", arg0); }} '
                 'END { printf("end\\n"); }', "--", fib, "10")
    assert done.stdout == "fib(10) = 55\n"
    assert records.read_text().endswith("end\n\n\n")         # bpftrace's two newlines at exit
    lines = records.read_text().rstrip("\n").splitlines()
    assert len(lines) == 177 + 1 and lines[0] == "10" and lines[-1] == "end"
    assert sorted(set(lines[:-1]), key=int) == [str(n) for n in range(11)]
