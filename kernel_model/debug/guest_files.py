"""The guest's files as a debugger reads them (part of the debug interface,
kernel_model/debug/): open a path as a process sees it, read, write and stat the open file,
read a symbolic link, remove a name. gdbserver does this for gdb's Host I/O packets (GDB manual,
"Host I/O Packets": vFile:open, pread, fstat...) in the file system of the process gdb names
(vFile:setfs: gdbserver enters the process's mount namespace, linux_mntns_access_fs), or in
its own for pid 0; gdb reads /proc/PID/task/TID/maps there to find the vDSO
(linux-tdep.c linux_vsyscall_range_raw) and, with its default sysroot "target:", the
program's shared libraries.

A path is looked up from the process's root and working directory with its credentials, as
the tool would see the files if it ran in the process's place; `global_root` looks it up from
the sandbox's root instead (the tree the sandbox runs in: the stub's own file system, pid 0's).
The kernel's refusals come back as OSError with Linux's errno, as a host file's would.
"""
from __future__ import annotations

import os

from ..errno import GuestErrno
from ..fsview import GlobalFsView, fs_view


class GuestFiles:
    def __init__(self, kernel):
        self._kernel = kernel

    def open_guest_file(self, process, path: bytes, flags: int, mode: int = 0, *,
                        global_root: bool = False):
        """An open file of the guest (an OpenFile: close it with close_guest_file). `flags`
        and `mode` are open(2)'s, Linux's values."""
        view = _view(process, global_root)
        return _guest(lambda: self._kernel.fs.open(path, flags, mode, _cwd(process, global_root), view))

    @staticmethod
    def read_guest_file(opened, offset: int, count: int) -> bytes:
        """pread(2): at most `count` bytes from `offset` (fewer at the end of the file)."""
        return _guest(lambda: opened.pread(count, offset))

    @staticmethod
    def write_guest_file(opened, offset: int, data: bytes) -> int:
        """pwrite(2): the number of bytes written at `offset`."""
        return _guest(lambda: opened.pwrite(data, offset))

    @staticmethod
    def stat_guest_file(opened):
        """fstat(2) of the open file (a StatResult)."""
        return _guest(opened.stat)

    @staticmethod
    def close_guest_file(opened) -> None:
        opened.close()

    def read_guest_link(self, process, path: bytes, *, global_root: bool = False) -> bytes:
        """readlink(2) of `path` (/proc/PID/exe, a library's symlink)."""
        view = _view(process, global_root)
        return _guest(lambda: self._kernel.fs.readlink(path, _cwd(process, global_root), view))

    def unlink_guest_path(self, process, path: bytes, *, global_root: bool = False) -> None:
        """unlink(2) of `path`."""
        view = _view(process, global_root)
        _guest(lambda: self._kernel.fs.unlink(path, _cwd(process, global_root), view))


def _view(process, global_root: bool):
    return GlobalFsView(process) if global_root else fs_view(process)


def _cwd(process, global_root: bool) -> bytes:
    return b"/" if global_root else process.cwd


def _guest(call):
    try:
        return call()
    except GuestErrno as error:
        raise OSError(error.errno, os.strerror(error.errno)) from None
