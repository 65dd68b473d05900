"""kernel_model/ipc/namespace.py: each System V kind's table comes when the kind is first used
(issue 31, start-up). A namespace published on the file system, and processes that exec, fork
and exit with no attachment and no SEM_UNDO, import none of the kinds' modules; the
/proc/sys/kernel limits it publishes are its IpcLimits', read and written there; the
/proc/sysvipc files read the tables (made then)."""
import subprocess
import sys
from types import SimpleNamespace

from kernel_model.ipc import proctext
from kernel_model.ipc.namespace import IpcNamespace

KINDS = ("kernel_model.ipc.msg", "kernel_model.ipc.sem", "kernel_model.ipc.shm", "kernel_model.ipc.proctext")


class _Fs:
    def __init__(self):
        self.files, self.sysctl, self.writers = {}, {}, {}

    def add_proc_file(self, path, text):
        self.files[path] = text

    def add_sysctl(self, path, text, write=None, mode=None):
        self.sysctl[path], self.writers[path] = text, write


def test_published_files_read_the_kinds_values_and_tables():
    fs, ipc = _Fs(), IpcNamespace(lambda sem_set: None)
    ipc.publish(fs)
    assert {path: read() for path, read in fs.sysctl.items() if not path.endswith(b"_next_id")} \
        == {b"kernel/msgmax": b"8192", b"kernel/msgmnb": b"16384", b"kernel/msgmni": b"32000",
            b"kernel/sem": b"32000\t1024000000\t500\t32000", b"kernel/shmall": b"18446744073692774399",
            b"kernel/shmmax": b"18446744073692774399", b"kernel/shmmni": b"4096"}
    assert fs.files[b"sysvipc/msg"]() == proctext.msg_text(ipc.msg)
    assert fs.files[b"sysvipc/shm"]().startswith(proctext.SHM_HEADER)
    assert ipc.sem is ipc.sem                            # one table, kept


def test_a_written_limit_is_the_one_the_table_counts_against():
    fs, ipc = _Fs(), IpcNamespace(lambda sem_set: None)
    ipc.publish(fs)
    assert fs.writers[b"kernel/msgmni"](0, b"7\n") == 2
    assert fs.sysctl[b"kernel/msgmni"]() == b"7" and ipc.msg.limit() == 7
    assert ipc.limits.msgmni == 7


SCRIPT = f"""
import sys
from types import SimpleNamespace
from kernel_model.ipc.namespace import IpcNamespace
fs = SimpleNamespace(add_proc_file=lambda path, text: None, add_sysctl=lambda path, text, *writer: None)
ipc = IpcNamespace(lambda sem_set: None)
ipc.publish(fs)
proc = SimpleNamespace(shm_attached={{}}, sem_undo=[])
ipc.detach_all(proc)
ipc.forked(proc)
ipc.exit(proc)
print(" ".join(m for m in {KINDS!r} if m in sys.modules) or "-")
"""


def test_a_run_that_uses_no_kind_imports_none():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["-"]
