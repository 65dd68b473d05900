"""strace -f's split lines (unfinished.py, client.py): a call that sleeps while another task
prints shows its entry part and `<unfinished ...>`, its end `<... NAME resumed>` and the rest;
joined, the two halves are the whole call's text."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trapline.strace.syscall_line import entry_arguments
from trapline.strace.unfinished import entry_part, resumed_part

ROOT = Path(__file__).resolve().parents[4]


def test_entry_arguments_stop_at_the_first_output():
    assert entry_arguments("read", 64, 3) == 1            # read(3, <buf out>, 256)
    assert entry_arguments("wait4", 32, 4) == 1
    assert entry_arguments("rt_sigprocmask", 64, 4) == 2   # how, set; oldset is the kernel's
    assert entry_arguments("write", 64, 3) == 3
    assert entry_arguments("getdents64", 64, 3) == 1


@given(st.lists(st.text(alphabet="ab1\", ", min_size=1, max_size=5), max_size=5), st.data())
def test_the_two_halves_make_the_whole_call(texts, data):
    entered = data.draw(st.integers(min_value=0, max_value=len(texts)))
    start, end = entry_part("f", texts, entered), resumed_part("f", texts, entered)
    assert end.startswith("<... f resumed>")
    joined = start + end[len("<... f resumed>"):]
    assert joined == f"f({', '.join(texts)})"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_read_that_sleeps_while_the_writer_runs(arch):
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "-f", "--strace", "--",
                           str(ROOT / "samples" / "bin" / arch / "fork_pipe")],
                          capture_output=True, timeout=300, cwd=ROOT)
    lines = done.stderr.decode().splitlines()
    start = lines.index("[pid   100] read(3,  <unfinished ...>")
    assert lines[start + 1].startswith("[pid   101] ")            # the writer ran meanwhile
    resumed = next(line for line in lines[start:] if "<... read resumed>" in line)
    # woken by the first write, the reader runs before the writer goes on (process/sched.py's
    # wakeup preemption): one line, as natively
    assert re.fullmatch(r'(\[pid   100\] )?<\.\.\. read resumed>"line 0\\n", 256\) += 7',
                        resumed), resumed
