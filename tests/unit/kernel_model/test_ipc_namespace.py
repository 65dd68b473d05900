"""kernel_model/ipc/namespace.py: each System V kind's table comes when the kind is first used
(issue 31, start-up). A namespace published on the file system, and processes that exec, fork
and exit with no attachment and no SEM_UNDO, import none of the kinds' modules; the
/proc/sys/kernel limits it publishes are proctext's, path for path, and read its values; the
/proc/sysvipc files read the tables (made then)."""
import subprocess
import sys
from types import SimpleNamespace

from kernel_model.ipc import proctext
from kernel_model.ipc.namespace import LIMIT_PATHS, IpcNamespace

KINDS = ("kernel_model.ipc.msg", "kernel_model.ipc.sem", "kernel_model.ipc.shm", "kernel_model.ipc.proctext")


class _Fs:
    def __init__(self):
        self.files, self.sysctl = {}, {}

    def add_proc_file(self, path, text):
        self.files[path] = text

    def add_sysctl(self, path, text, write=None, mode=None):
        self.sysctl[path] = text


def test_the_limit_paths_are_proctexts():
    assert LIMIT_PATHS == tuple(proctext.LIMITS)


def test_published_files_read_the_kinds_values_and_tables():
    fs, ipc = _Fs(), IpcNamespace(lambda sem_set: None)
    ipc.publish(fs)
    assert {path: read() for path, read in fs.sysctl.items() if not path.endswith(b"_next_id")} \
        == {path: value() for path, value in proctext.LIMITS.items()}
    assert fs.files[b"sysvipc/msg"]() == proctext.msg_text(ipc.msg)
    assert fs.files[b"sysvipc/shm"]().startswith(proctext.SHM_HEADER)
    assert ipc.sem is ipc.sem                            # one table, kept


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
