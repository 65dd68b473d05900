"""The file system as a task restricted by a Landlock domain reaches it: each call that makes,
removes, moves or truncates a name, or opens a file, first asks the domain about the folder
or file concerned (security/landlock/fs.c hook_path_mknod/mkdir/symlink/unlink/rmdir/rename/
link/truncate and hook_file_open), then is the file system's own. An unrestricted task gets
the file system itself (guarded), so it pays nothing.

As Linux's security_path_* hooks run after the lookup (filename_create's EEXIST, a missing
folder's ENOENT) and before the inode's own permission checks, a name the call would refuse
anyway is left to the file system's error. Names are compared by their canonical paths
(realpath of the folder), as rules are kept (ruleset.py).
"""
import os

from .. import errno as E
from ..errno import GuestErrno
from ..fs.constants import (O_CREAT, O_PATH, S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFMT,
                            S_IFSOCK)
from . import abi
from .hooks import open_access

MAKE_BY_KIND = {S_IFDIR: abi.ACCESS_FS_MAKE_DIR, S_IFCHR: abi.ACCESS_FS_MAKE_CHAR,
                S_IFBLK: abi.ACCESS_FS_MAKE_BLOCK, S_IFIFO: abi.ACCESS_FS_MAKE_FIFO,
                S_IFSOCK: abi.ACCESS_FS_MAKE_SOCK, 0o120000: abi.ACCESS_FS_MAKE_SYM}


def guarded(fs, domain):
    return fs if domain is None else GuardedFs(fs, domain)


def _make_right(kind: int) -> int:
    return MAKE_BY_KIND.get(kind, abi.ACCESS_FS_MAKE_REG)


def _remove_right(kind: int) -> int:
    return abi.ACCESS_FS_REMOVE_DIR if kind == S_IFDIR else abi.ACCESS_FS_REMOVE_FILE


class GuardedFs:
    def __init__(self, fs, domain):
        self._fs = fs
        self._domain = domain

    def __getattr__(self, name):
        return getattr(self._fs, name)

    # --- where a name is: its folder's canonical path, its kind ----------------------------
    def _folder(self, path: bytes, cwd: bytes, proc) -> bytes | None:
        name = path.rstrip(b"/") or b"/"
        try:
            return self._fs.realpath(os.path.dirname(name) or b".", cwd, proc)
        except GuestErrno:
            return None                 # the call's own lookup fails first

    def _kind(self, path: bytes, cwd: bytes, proc) -> int | None:
        try:
            return self._fs.stat(path, cwd, proc, follow=False).mode & S_IFMT
        except GuestErrno:
            return None

    def _demand(self, path: bytes | None, access: int, errno: int = E.EACCES) -> None:
        if path is not None and self._domain.denies_path(path, access):
            raise GuestErrno(errno)

    def _new_name(self, path: bytes, cwd: bytes, proc, access: int) -> None:
        if self._kind(path, cwd, proc) is None:        # else the call's EEXIST
            self._demand(self._folder(path, cwd, proc), access)

    # --- making names ------------------------------------------------------------------------
    def mkdir(self, path, mode, cwd, proc):
        self._new_name(path, cwd, proc, abi.ACCESS_FS_MAKE_DIR)
        return self._fs.mkdir(path, mode, cwd, proc)

    def mknod(self, path, mode, cwd, proc, rdev=0):
        self._new_name(path, cwd, proc, _make_right(mode & S_IFMT))
        return self._fs.mknod(path, mode, cwd, proc, rdev)

    def symlink(self, target, linkpath, cwd, proc):
        self._new_name(linkpath, cwd, proc, abi.ACCESS_FS_MAKE_SYM)
        return self._fs.symlink(target, linkpath, cwd, proc)

    def link_inode(self, node, new, cwd, proc):
        self._new_name(new, cwd, proc, _make_right(node.stat().mode & S_IFMT))
        return self._fs.link_inode(node, new, cwd, proc)

    # --- removing and moving names -----------------------------------------------------------
    def rmdir(self, path, cwd, proc):
        if self._kind(path, cwd, proc) == S_IFDIR:
            self._demand(self._folder(path, cwd, proc), abi.ACCESS_FS_REMOVE_DIR)
        return self._fs.rmdir(path, cwd, proc)

    def unlink(self, path, cwd, proc):
        kind = self._kind(path, cwd, proc)
        if kind is not None and kind != S_IFDIR:
            self._demand(self._folder(path, cwd, proc), abi.ACCESS_FS_REMOVE_FILE)
        return self._fs.unlink(path, cwd, proc)

    def rename(self, old, new, cwd, proc):
        """fs.c current_check_refer_path: removing from the old folder and making in the new
        one (a replaced name removed too) are EACCES; then, between two folders, REFER on
        both, whose refusal is EXDEV (the caller may then copy and delete)."""
        kind = self._kind(old, cwd, proc)
        if kind is not None:
            src, dst = self._folder(old, cwd, proc), self._folder(new, cwd, proc)
            replaced = self._kind(new, cwd, proc)
            self._demand(src, _remove_right(kind))
            self._demand(dst, _make_right(kind))
            if replaced is not None:
                self._demand(dst, _remove_right(replaced))
            if src != dst:
                self._demand(src, abi.ACCESS_FS_REFER, E.EXDEV)
                self._demand(dst, abi.ACCESS_FS_REFER, E.EXDEV)
        return self._fs.rename(old, new, cwd, proc)

    def exchange(self, old, new, cwd, proc):
        """RENAME_EXCHANGE (current_check_refer_path with exchange): each name leaves its folder
        and arrives in the other's, so both folders need the remove and make rights of both
        kinds, and REFER between two folders (EXDEV)."""
        kinds = (self._kind(old, cwd, proc), self._kind(new, cwd, proc))
        folders = (self._folder(old, cwd, proc), self._folder(new, cwd, proc))
        if None not in kinds:
            for folder, leaving, arriving in zip(folders, kinds, reversed(kinds)):
                self._demand(folder, _remove_right(leaving))
                self._demand(folder, _make_right(arriving))
            if folders[0] != folders[1]:
                for folder in folders:
                    self._demand(folder, abi.ACCESS_FS_REFER, E.EXDEV)
        return self._fs.exchange(old, new, cwd, proc)

    # --- a file's contents -------------------------------------------------------------------
    def truncate(self, path, length, cwd, proc, *args, **kwargs):
        if length >= 0:
            try:
                real = self._fs.realpath(path, cwd, proc)
            except GuestErrno:
                real = None
            self._demand(real, abi.ACCESS_FS_TRUNCATE)
        return self._fs.truncate(path, length, cwd, proc, *args, **kwargs)

    def open(self, path, flags, mode, cwd, proc):
        """A new file is MAKE_REG in its folder (hook_path_mknod, reached from open's
        O_CREAT); an existing one is asked its opening's rights before O_TRUNC cuts it
        (hook_file_open runs in do_dentry_open, before handle_truncate)."""
        if not flags & O_PATH:
            try:
                real = self._fs.realpath(path, cwd, proc)
            except GuestErrno:
                real = None
                if flags & O_CREAT:
                    self._demand(self._folder(path, cwd, proc), abi.ACCESS_FS_MAKE_REG)
            if real is not None:
                kind = self._fs.stat(path, cwd, proc).mode & S_IFMT
                self._demand(real, open_access(flags, kind == S_IFDIR))
        return self._fs.open(path, flags, mode, cwd, proc)
