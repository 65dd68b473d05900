"""The language's functions on a real guest: usym/uaddr against the program's symbols, join of
an argv (main's, and execve's args.argv), buf, time on the virtual clock, proc:exec."""
import pytest

from tests.e2e.lang.lang_run import ARCHES, sample, trace

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arch", ARCHES)
def test_symbols_argv_buf_and_time(arch):
    fib = sample(arch, "fib")
    done = trace("-e", f'uprobe:{fib}:main {{ printf("%s|%d|", usym(uaddr("fib")), uaddr("fib") > 0); '
                 'join(arg1); printf("[%s]\\n", buf(arg1, 2)); time("%Y\\n"); }', "--", fib, "4")
    lines = done.stdout.splitlines()
    assert lines[0] == f"fib|1|{fib} 4"
    assert lines[1].startswith("[") and "\\x" in lines[1]          # a pointer's bytes, escaped
    assert lines[2].isdigit() and int(lines[2]) >= 2000             # the guest's virtual clock
    assert lines[3] == "fib(4) = 3"
    assert done.stdout == trace("-e", f'uprobe:{fib}:main {{ printf("%s|%d|", usym(uaddr("fib")), '
                                'uaddr("fib") > 0); join(arg1); printf("[%s]\\n", buf(arg1, 2)); '
                                'time("%Y\\n"); }', "--", fib, "4").stdout


@pytest.mark.parametrize("arch", ARCHES)
def test_execve_argv_and_proc_exec(arch):
    program = sample(arch, "exec_chain")
    done = trace("-e", 'tracepoint:syscalls:sys_enter_execve { join(args.argv, ","); } '
                 'proc:exec { @execs[comm] = count(); }', "--", program)
    joined = [line for line in done.stdout.splitlines() if line.startswith(program + ",")]
    assert joined == [f"{program},{n},3,4,5" for n in (2, 1, 0)]      # the chain counts down
    assert "@execs[exec_chain]: 3" in done.stdout
