"""strace's options on `trapline run` (trapline/cli/strace_options.py), with strace's spelling:
-o FILE, -ff -o PREFIX, -e, -s, -z/-Z, -c, -T/-tt on the virtual clock; `trapline --version`.
They run a sample on both arches and read the trace strace would write."""
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.cli import main
from trapline.version import __version__

ROOT = Path(__file__).resolve().parents[4]
ARCHES = ("i386", "x86_64")


def _run(*argv: str):
    return CliRunner().invoke(main, ["run", "--clear-env", *argv])


def _sample(arch: str, name: str) -> str:
    return str(ROOT / "samples" / "bin" / arch / name)


@pytest.mark.parametrize("arch", ARCHES)
def test_dash_o_writes_the_trace_to_a_file_with_the_initial_execve(arch, tmp_path):
    out = tmp_path / "trace"
    result = _run("-o", str(out), "--", _sample(arch, "hello"))
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines[0].startswith(f'execve("{_sample(arch, "hello")}", ["{_sample(arch, "hello")[:32]}"...], 0x')
    assert lines[0].endswith(" /* 0 vars */) = 0")
    assert lines[-1] == "+++ exited with 0 +++"
    assert "exit_group(0)                           = ?" in lines      # `= ` at column 40


@pytest.mark.parametrize("arch", ARCHES)
def test_dash_ff_writes_one_file_per_process(arch, tmp_path):
    prefix = tmp_path / "t"
    result = _run("-ff", "-o", str(prefix), "--", _sample(arch, "vfork_status"))
    assert result.exit_code == 0, result.output
    files = sorted(tmp_path.iterdir())
    assert len(files) > 1 and all(re.fullmatch(r"t\.\d+", f.name) for f in files)
    assert all(f.read_text().rstrip().splitlines()[-1].startswith("+++ ") for f in files)
    assert not any(re.match(r"^\d+ ", line) for f in files for line in f.read_text().splitlines())


@pytest.mark.parametrize("arch", ARCHES)
def test_dash_f_with_dash_o_puts_the_pid_first_on_every_line(arch, tmp_path):
    out = tmp_path / "trace"
    assert _run("-f", "-o", str(out), "--", _sample(arch, "vfork_status")).exit_code == 0
    lines = out.read_text().splitlines()
    assert all(re.match(r"^\d+ +\S", line) for line in lines), lines[:3]
    assert len({line.split()[0] for line in lines}) > 1


@pytest.mark.parametrize("arch", ARCHES)
def test_trace_set_status_and_string_limit(arch, tmp_path):
    out = tmp_path / "trace"
    assert _run("-o", str(out), "-e", "trace=writev,ioctl", "-Z", "-s", "4", "--",
                _sample(arch, "hello")).exit_code == 0
    assert [line.split("(")[0] for line in out.read_text().splitlines()] == ["ioctl", "+++ exited with 0 +++"]
    assert _run("-o", str(out), "-e", "trace=writev", "-s", "4", "--",
                _sample(arch, "hello")).exit_code == 0
    assert '{iov_base="hell"..., iov_len=13}' in out.read_text()


def test_a_bad_expression_is_a_usage_error_naming_it():
    result = _run("-e", "trace=nosuch", "--", _sample("x86_64", "hello"))
    assert result.exit_code == 2
    assert "invalid system call 'nosuch'" in result.output


@pytest.mark.parametrize("arch", ARCHES)
def test_summary_and_virtual_times(arch, tmp_path):
    out = tmp_path / "trace"
    assert _run("-c", "-o", str(out), "--", _sample(arch, "hello")).exit_code == 0
    table = out.read_text().splitlines()
    assert table[0].startswith("% time") and table[-1].endswith(" total")
    assert any(line.endswith(" writev") for line in table)
    assert _run("-tt", "-T", "-o", str(out), "--", _sample(arch, "hello")).exit_code == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("22:13:20.000000 execve(")           # the virtual clock's epoch
    assert re.search(r"= 13 <0\.\d{6}>$", next(line for line in lines if "writev(" in line))


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output == f"trapline -- version {__version__}\n"


@pytest.mark.parametrize("arch", ARCHES)
def test_dash_y_shows_each_descriptors_path(arch, tmp_path):
    """strace -y: `open(...) = 3</work/data.txt>`, the same path in the calls on 3, and close's
    as it was before the close."""
    out = tmp_path / "trace"
    assert _run("-y", "-o", str(out), "--cwd", str(tmp_path), "--",
                _sample(arch, "fileio")).exit_code == 0
    text = out.read_text()
    path = f"{tmp_path}/data.txt"
    assert f"= 3<{path}>" in text
    assert f"write(3<{path}>, " in text and f"close(3<{path}>)" in text
    assert re.search(rf"fcntl(64)?\(3<{re.escape(str(tmp_path))}>, F_SETFD, FD_CLOEXEC\)", text)


def test_an_output_file_that_cannot_be_made_is_one_line(tmp_path):
    result = _run("-o", str(tmp_path / "no" / "such"), "--", _sample("x86_64", "hello"))
    assert result.exit_code == 2
    assert f"Can't fopen '{tmp_path}/no/such': No such file or directory" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("arch", ARCHES)
def test_dash_capital_x_prints_constants_raw_or_both(arch, tmp_path):
    out = tmp_path / "trace"
    assert _run("-X", "raw", "-o", str(out), "--cwd", str(tmp_path), "--",
                _sample(arch, "fileio")).exit_code == 0
    assert re.search(r'^open\("data.txt", 0x[0-9a-f]+, 0644\)', out.read_text(), re.M)
    assert "lseek(3, 0, 0x2)" in out.read_text() or "_llseek(3, 0, " in out.read_text()
    (tmp_path / "w").mkdir()
    assert _run("-X", "verbose", "-o", str(out), "--cwd", str(tmp_path / "w"), "--",
                _sample(arch, "fileio")).exit_code == 0
    assert re.search(r'^open\("data.txt", 0x[0-9a-f]+ /\* O_RDWR\|O_CREAT\|O_EXCL\|O_LARGEFILE \*/, 0644\)',
                     out.read_text(), re.M)


@pytest.mark.parametrize("arch", ARCHES)
def test_times_are_the_virtual_clocks_in_the_lines_and_the_table(arch, tmp_path):
    """-C -T: pause waits for alarm(1): one virtual second (less the microsecond its own call
    charges), in its line and in its row of the table alike."""
    out = tmp_path / "trace"
    assert _run("-C", "-T", "-o", str(out), "--", _sample(arch, "signals")).exit_code == 0
    text = out.read_text()
    assert re.search(r"^pause\(\) += \? ERESTARTNOHAND \(To be restarted if no handler\) <0\.999999>$",
                     text, re.M)
    assert re.search(r"^ *\d+\.\d\d +0\.999999 +999999 +1 +1 pause$", text, re.M)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("spelling", ["-v", "--no-abbrev"])
def test_dash_v_prints_structures_in_full(arch, spelling, tmp_path):
    """strace -v: fileio's fstat (x86-64) or statx (i386) and its getdents64 in full."""
    out = tmp_path / "trace"
    assert _run("--strace", spelling, "-o", str(out), "--", _sample(arch, "fileio")).exit_code == 0
    lines = out.read_text().splitlines()
    stat = next(line for line in lines if line.startswith(("fstat(3,", "statx(3,")))
    assert "st_nlink=1, " in stat or "stx_nlink=1, " in stat
    assert "..." not in stat and "_atime" in stat and "+0000 */" in stat
    dents = next(line for line in lines if line.startswith("getdents64(3, ["))
    assert 'd_name="."' in dents
    assert lines[0].endswith(", []) = 0")              # the (empty) environment in full


@pytest.mark.parametrize("arch", ARCHES)
def test_column_quiet_raw_and_sort_options(arch, tmp_path):
    """-a COLUMN, -qq (no exit line), -e raw=NAME (hex arguments and result), -c -S name -w;
    an i386 program's personality line on stderr (strace's default quiets it only with -o)."""
    out = tmp_path / "trace"
    assert _run("-a", "20", "-qq", "-o", str(out), "--", _sample(arch, "hello")).exit_code == 0
    lines = out.read_text().splitlines()
    assert "exit_group(0)       = ?" in lines and not lines[-1].startswith("+++")
    assert _run("-e", "raw=set_tid_address", "-e", "trace=set_tid_address", "-o", str(out), "--",
                _sample(arch, "hello")).exit_code == 0
    assert re.match(r"set_tid_address\(0x[0-9a-f]+\) += 0x64$", out.read_text().splitlines()[0])
    assert _run("-c", "-S", "name", "-w", "-o", str(out), "--", _sample(arch, "hello")).exit_code == 0
    table = out.read_text().splitlines()
    names = [line.split()[-1] for line in table
             if re.match(r"^ *\d+\.\d\d ", line) and not line.endswith(" total")]
    if arch == "i386":      # the first execve is 64-bit: its own table, before the 32-bit one
        assert names[0] == "execve" and "System call usage summary for 32 bit mode:" in table
        names = names[1:]
    assert names == sorted(names) and len(names) >= 4
    result = CliRunner().invoke(main, ["run", "--strace", "--", _sample(arch, "hello")])
    personality = "[ Process PID=100 runs in 32 bit mode. ]"
    assert (personality in result.output) == (arch == "i386")


def test_the_sort_keys_offered_are_the_tables():
    from trapline.cli.strace_options import SORT_NAMES
    from trapline.strace.summary import SORT_KEYS
    assert SORT_NAMES == tuple(sorted(SORT_KEYS))


@pytest.mark.parametrize("command", ["run", "trace", "profile", "gdbserver"])
def test_help_says_which_strace_options_mean_nothing_here_and_why(command):
    """Each command that takes strace's options lists the ones it does not take, with why, and
    says -t/-r/-T/-c are the virtual clock's; an unknown option is an error naming it."""
    text = " ".join(CliRunner().invoke(main, [command, "--help"]).output.split())
    assert "-p/--attach PID (no host process to attach to" in text
    assert "--seccomp-bpf (a stop costs nothing" in text
    assert text.count("On the sandbox's virtual clock") >= 4
    for option in ("-S, --summary-sort-by", "-w, --summary-wall-clock", "-q ", "-a, --columns"):
        assert option in text, option
    result = CliRunner().invoke(main, [command, "-Q", _sample("x86_64", "hello")])
    assert result.exit_code == 2 and "No such option '-Q'" in result.output


@pytest.mark.parametrize("arch", ARCHES)
def test_dash_n_numbers_every_line_with_its_callers_abi(arch, tmp_path):
    """-n under -f -o: pid, then the number; the first execve is x86-64's 59 (strace's child's),
    the program's calls are its ABI's (i386 set_thread_area 243), the exit line the last call's."""
    out = tmp_path / "trace"
    assert _run("-n", "-f", "-o", str(out), "--", _sample(arch, "hello")).exit_code == 0
    lines = out.read_text().splitlines()
    assert re.match(r"^100   \[  59\] execve\(", lines[0])
    assert (f"[ {231 if arch == 'x86_64' else 252}] +++ exited with 0 +++") in lines[-1]
    if arch == "i386":
        assert lines[1].startswith("100   [ 243] set_thread_area(")
