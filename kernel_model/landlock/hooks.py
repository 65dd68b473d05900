"""The questions the kernel's paths ask Landlock, one per LSM hook; each is a no-op for a task
no ruleset restricts (its TaskFlags.landlock is None), so unrestricted calls pay one lookup.

- file_open (security/landlock/fs.c hook_file_open): opening a file asks READ_FILE and/or
  WRITE_FILE by its access mode (READ_DIR for a folder opened for reading), TRUNCATE with
  O_TRUNC; an O_PATH open asks nothing; exec's opening READ_FILE and EXECUTE. EACCES.
- ftruncate (hook_file_truncate): TRUNCATE as it was when the file was opened; EACCES.
- TCP bind and connect (net.c hook_socket_bind/connect, current_check_access_socket): the
  port, in host order; EACCES.
- connect or send to an abstract unix socket (task.c hook_unix_stream_connect/may_send):
  EPERM when the caller's scoped layers do not hold the socket's creator.
- signals (task.c hook_task_kill): EPERM likewise for LANDLOCK_SCOPE_SIGNAL.
"""
from .. import errno as E
from ..errno import GuestErrno
from ..fs.constants import O_ACCMODE, O_PATH, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY
from .abi import (ACCESS_FS_EXECUTE, ACCESS_FS_READ_DIR, ACCESS_FS_READ_FILE,
                  ACCESS_FS_TRUNCATE, ACCESS_FS_WRITE_FILE, ACCESS_NET_BIND_TCP, ACCESS_NET_CONNECT_TCP,
                  SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL)
from .domain import NO_DOMAIN


def domain_of(thread):
    return thread.task_flags.landlock


def open_access(flags: int, is_dir: bool) -> int:
    """The rights opening with `flags` asks (an O_PATH open asks none)."""
    if flags & O_PATH:
        return 0
    access = 0
    if flags & O_ACCMODE in (O_RDONLY, O_RDWR):
        access |= ACCESS_FS_READ_DIR if is_dir else ACCESS_FS_READ_FILE
    if flags & O_ACCMODE in (O_WRONLY, O_RDWR):
        access |= ACCESS_FS_WRITE_FILE
    if flags & O_TRUNC and not is_dir:
        access |= ACCESS_FS_TRUNCATE
    return access


def check_open(thread, f, flags: int, is_dir: bool) -> None:
    """What was opened, by the path it was opened as (a file just created, a /proc/PID/fd
    link reopened): fs_guard.py asked before the opening where it could. The file keeps
    whether TRUNCATE was its opener's (landlock_file(file)->allowed_access, which
    hook_file_truncate asks at ftruncate, whatever domain the caller has by then)."""
    domain = domain_of(thread)
    if domain is None:
        return
    if domain.denies_path(f.path, open_access(flags, is_dir)):
        raise GuestErrno(E.EACCES)
    f.landlock_truncate_denied = domain.denies_path(f.path, ACCESS_FS_TRUNCATE)


def check_file_truncate(f) -> None:
    """hook_file_truncate: a file opened by a task its domain denied TRUNCATE (EACCES)."""
    if getattr(f, "landlock_truncate_denied", False):
        raise GuestErrno(E.EACCES)


def check_exec(thread, path: bytes) -> None:
    """open_exec's file (the program, its interpreter, a script's): opened for reading with
    __FMODE_EXEC, so hook_file_open asks READ_FILE and EXECUTE."""
    domain = domain_of(thread) if thread is not None else None
    if domain is not None and domain.denies_path(path, ACCESS_FS_READ_FILE | ACCESS_FS_EXECUTE):
        raise GuestErrno(E.EACCES)


def check_tcp(thread, port: int, *, connect: bool) -> None:
    domain = domain_of(thread)
    access = ACCESS_NET_CONNECT_TCP if connect else ACCESS_NET_BIND_TCP
    if domain is not None and domain.denies_port(port, access):
        raise GuestErrno(E.EACCES)


def check_abstract_peer(thread, abstract: bool, owner_domain) -> None:
    """Connecting or sending to an abstract unix socket whose creator's domain was
    owner_domain (the socket file's f_cred, taken at its creation): EPERM when a layer of the
    caller scoping LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET does not hold it."""
    domain = domain_of(thread)
    if abstract and domain is not None and domain.scoped_from(owner_domain or NO_DOMAIN,
                                                              SCOPE_ABSTRACT_UNIX_SOCKET):
        raise GuestErrno(E.EPERM)


def may_signal(thread, target_thread) -> bool:
    domain = domain_of(thread)
    if domain is None or target_thread is None:
        return True
    return not domain.scoped_from(domain_of(target_thread) or NO_DOMAIN, SCOPE_SIGNAL)
