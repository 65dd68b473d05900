"""/proc is built on the first lookup under it (kernel_model/fs/filesystem.py, issue 31's
start-up): whatever the kernel registers before or after that moment (a /proc/sys value, a
/proc file, the list of processes) shows as if /proc had been there from the start."""
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel_model import errno as E
from kernel_model.fdtable import FdTable
from kernel_model.fs import FileSystem
from kernel_model.fsview import fs_view
from kernel_model.process.proc import Process, Thread

from tests.unit.kernel_model.fs.helpers import PROC, errno_of, names, read_file

_names = st.sampled_from([b"a", b"b", b"c"])
_values = st.binary(min_size=1, max_size=8).filter(lambda v: b"\n" not in v)
_registrations = st.lists(st.tuples(st.sampled_from(["sysctl", "file"]), _names, _values), max_size=5)


def _path(kind: str, name: bytes) -> bytes:
    return (b"/proc/sys/kernel/lazy_" if kind == "sysctl" else b"/proc/lazy_") + name


def _register(fs: FileSystem, kind: str, name: bytes, value: bytes) -> None:
    rel = (b"kernel/lazy_" if kind == "sysctl" else b"lazy_") + name
    (fs.add_sysctl if kind == "sysctl" else fs.add_proc_file)(rel, lambda: value)


def _others() -> dict:
    """Another process of the run, pid 43, as the kernel lists it (Kernel.__init__)."""
    proc = Process(43, 42, None, FdTable(), pgid=42, sid=7, exe=b"/bin/other")
    proc.threads.append(Thread(43, proc, 0))
    return {43: fs_view(proc)}


def _expected(kind: str, value: bytes) -> bytes:
    return value + b"\n" if kind == "sysctl" else value       # procsys.py ends a value with \n


@settings(max_examples=60, deadline=None)
@given(before=_registrations, after=_registrations.filter(bool), listed_after=st.booleans())
def test_entries_registered_before_or_after_the_mount_show(before, after, listed_after):
    fs = FileSystem(None, seed=7)
    model = {}
    for kind, name, value in before:
        _register(fs, kind, name, value)
        model[(kind, name)] = value
    if not listed_after:
        fs.list_processes(_others)
    assert b"self" in names(fs, b"/proc")             # the mount is made here
    for kind, name, value in after:                  # never empty: registrations after it
        _register(fs, kind, name, value)
        model[(kind, name)] = value
    if listed_after:
        fs.list_processes(_others)
    for kind in ("sysctl", "file"):
        for name in (b"a", b"b", b"c"):
            if (kind, name) in model:
                assert read_file(fs, _path(kind, name)) == _expected(kind, model[(kind, name)])
            else:
                assert errno_of(fs.open, _path(kind, name), 0, 0, b"/", PROC) == E.ENOENT
    assert names(fs, b"/proc")[:4] == [b".", b"..", b"42", b"43"]   # the caller and the other
