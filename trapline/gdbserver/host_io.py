"""Host I/O packets (GDB manual, "Host I/O Packets"; File-I/O's flags, errno values and struct
stat in "Protocol-specific Representation of Datatypes"): gdb reads the target's files over
the connection, as from gdbserver. With the vDSO's AT_SYSINFO_EHDR in the auxv it reads
/proc/PID/task/PID/maps to find the vDSO's extent (linux-tdep.c linux_vsyscall_range_raw), and
with its default sysroot "target:" the shared libraries ("Reading /lib/... from remote
target..."). Without these packets it warned "unable to open /proc file".

The files are the guest's, through the door (kernel_model/debug/guest_files.py): vFile:setfs
PID chooses the process whose view of the files the next packets use (its root, its
credentials: gdbserver enters that process's mount namespace), 0 the stub's own, the sandbox's
root. Descriptors are the stub's (gdbserver's are its own process's), lowest free first.
Replies: `F RESULT[;ATTACHMENT]`, RESULT in hex, `F-1,ERRNO` on failure. Mixed into GdbServer.
"""
from __future__ import annotations

import errno
import struct

from .packets import escape, unescape

# File-I/O open flags (gdb's fileio.h FILEIO_O_*) -> Linux's (asm-generic/fcntl.h)
_OPEN_FLAGS = {0x1: 0o1, 0x2: 0o2, 0x8: 0o2000, 0x200: 0o100, 0x400: 0o1000, 0x800: 0o200}
_ACCESS_MODES = 0x3
# Linux errno -> File-I/O errno where they differ; a value File-I/O does not know is EUNKNOWN
_FILEIO_ERRNO = {errno.ENOSYS: 88, errno.ENAMETOOLONG: 91}
_FILEIO_KNOWN = {errno.EPERM, errno.ENOENT, errno.EINTR, errno.EBADF, errno.EACCES, errno.EFAULT,
                 errno.EBUSY, errno.EEXIST, errno.ENODEV, errno.ENOTDIR, errno.EISDIR, errno.EINVAL,
                 errno.ENFILE, errno.EMFILE, errno.EFBIG, errno.ENOSPC, errno.ESPIPE, errno.EROFS}
FILEIO_EUNKNOWN = 9999
# File-I/O struct stat: dev ino mode nlink uid gid rdev (4 bytes), size blksize blocks (8),
# atime mtime ctime (4), big-endian
_FILEIO_STAT = struct.Struct(">7I3Q3I")


def fileio_errno(linux: int) -> int:
    if linux in _FILEIO_ERRNO:
        return _FILEIO_ERRNO[linux]
    return linux if linux in _FILEIO_KNOWN else FILEIO_EUNKNOWN


def linux_open_flags(fileio: int) -> int:
    flags = 0
    for bit, linux in _OPEN_FLAGS.items():
        if fileio & bit and (bit & _ACCESS_MODES == 0 or fileio & _ACCESS_MODES == bit):
            flags |= linux
    return flags


def fileio_stat(st) -> bytes:
    """struct stat in File-I/O's layout, each field cut to its width."""
    def cut(value: int, bits: int) -> int:
        return value & ((1 << bits) - 1)
    seconds = (st.atime_ns // 10**9, st.mtime_ns // 10**9, st.ctime_ns // 10**9)
    return _FILEIO_STAT.pack(*(cut(v, 32) for v in (st.dev, st.ino, st.mode, st.nlink, st.uid,
                                                     st.gid, st.rdev)),
                             *(cut(v, 64) for v in (st.size, st.blksize, st.blocks)),
                             *(cut(v, 32) for v in seconds))


class HostIoPackets:
    """Needs of the server: debugger, g_thread, find_thread; host_fs_pid (vFile:setfs, 0: the
    stub's own file system) and host_files (the stub's descriptor -> the guest's open file)."""

    def host_io(self, text: str) -> bytes:
        """vFile:OPERATION:ARGS (the packet decoded as latin-1) -> the reply; an operation
        this stub has not: empty."""
        operation, _, args = text[len("vFile:"):].partition(":")
        handler = getattr(self, f"_vfile_{operation}", None)
        if handler is None:
            return b""
        try:
            return handler(args)
        except OSError as error:
            return f"F-1,{fileio_errno(error.errno):x}".encode()
        except (ValueError, IndexError):
            return f"F-1,{fileio_errno(errno.EINVAL):x}".encode()

    def close_host_files(self) -> None:
        """Detach, kill, a lost connection: what gdb left open is closed."""
        for opened in self.host_files.values():
            self.debugger.debug.close_guest_file(opened)
        self.host_files.clear()

    def _fs(self) -> tuple[object, bool]:
        """(the process whose files are meant, whether from the sandbox's root)."""
        pid = self.host_fs_pid
        process = self.debugger.processes.get(pid) if pid else None
        if process is None:
            thread = self.g_thread or self.find_thread(-1, -1)
            if thread is None:
                raise OSError(errno.ESRCH, "no process")
            process = thread.process
        if not self.debugger.debug.is_alive(process):
            raise OSError(errno.ESRCH, "no such process")
        return process, pid == 0

    def _vfile_setfs(self, args: str) -> bytes:
        pid = int(args, 16)
        if pid and pid not in self.debugger.processes:
            raise OSError(errno.ESRCH, "no such process")
        self.host_fs_pid = pid
        return b"F0"

    def _vfile_open(self, args: str) -> bytes:
        name, flags, mode = args.split(",")
        process, global_root = self._fs()
        opened = self.debugger.debug.open_guest_file(process, bytes.fromhex(name),
                                                     linux_open_flags(int(flags, 16)),
                                                     int(mode, 16), global_root=global_root)
        fd = next(n for n in range(len(self.host_files) + 1) if n not in self.host_files)
        self.host_files[fd] = opened
        return f"F{fd:x}".encode()

    def _opened(self, fd: str):
        opened = self.host_files.get(int(fd, 16))
        if opened is None:
            raise OSError(errno.EBADF, "not open")
        return opened

    def _vfile_close(self, args: str) -> bytes:
        opened = self._opened(args)
        del self.host_files[int(args, 16)]
        self.debugger.debug.close_guest_file(opened)
        return b"F0"

    def _vfile_pread(self, args: str) -> bytes:
        fd, count, offset = args.split(",")
        data = self.debugger.debug.read_guest_file(self._opened(fd), int(offset, 16), int(count, 16))
        return f"F{len(data):x};".encode() + escape(data)

    def _vfile_pwrite(self, args: str) -> bytes:
        fd, offset, data = args.split(",", 2)         # the data: binary, escaped
        written = self.debugger.debug.write_guest_file(self._opened(fd), int(offset, 16),
                                                       unescape(data.encode("latin-1")))
        return f"F{written:x}".encode()

    def _vfile_fstat(self, args: str) -> bytes:
        data = fileio_stat(self.debugger.debug.stat_guest_file(self._opened(args)))
        return f"F{len(data):x};".encode() + escape(data)

    def _vfile_readlink(self, args: str) -> bytes:
        process, global_root = self._fs()
        target = self.debugger.debug.read_guest_link(process, bytes.fromhex(args), global_root=global_root)
        return f"F{len(target):x};".encode() + escape(target)

    def _vfile_unlink(self, args: str) -> bytes:
        process, global_root = self._fs()
        self.debugger.debug.unlink_guest_path(process, bytes.fromhex(args), global_root=global_root)
        return b"F0"
