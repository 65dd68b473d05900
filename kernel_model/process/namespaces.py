"""A process's mount, UTS and IPC namespaces (kernel/nsproxy.c: create_new_namespaces,
copy_namespaces, and the install of each kind that setns calls).

Each is an attribute of the Process, None for the run's first one (the file system's initial
mount namespace, kernel.uts, kernel.ipc), so a process that never asks for a namespace makes
none. A new one is a copy where Linux copies (copy_mnt_ns: the mount table; copy_utsname:
the names) and empty where it starts empty (create_ipc_ns: no queue, set or segment, and
the default limits). Every new namespace takes the next dynamic inode number
(proc_alloc_inum), which /proc/PID/ns shows.
"""
import copy

from ..fsview import fs_view

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x04000000, 0x08000000
OWN_NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC
ATTRIBUTES = {CLONE_NEWNS: "mount_ns", CLONE_NEWUTS: "uts_ns", CLONE_NEWIPC: "ipc_ns"}


def unshare_namespaces(kernel, proc, flags: int) -> None:
    """unshare(2)'s new namespaces for the caller (switch_task_namespaces), and clone's for
    the child, which has its parent's until then (copy_namespaces)."""
    for name, ns in _new(kernel, proc, flags).items():
        setattr(proc, name, ns)


def enter_namespace(proc, ns_type: int, ns) -> None:
    """setns's install (mntns_install, utsns_install, ipcns_install): `ns` None is the run's
    first namespace of that kind."""
    setattr(proc, ATTRIBUTES[ns_type], ns)


def uts_of(kernel, proc):
    """The UTS names the process sees (utsname())."""
    return proc.uts_ns or kernel.uts


def ipc_of(kernel, proc):
    """The System V tables the process sees (current->nsproxy->ipc_ns)."""
    return proc.ipc_ns or kernel.ipc


def _new(kernel, proc, flags: int) -> dict:
    made = {}
    if flags & CLONE_NEWNS:
        from ..fs import mount_points
        made["mount_ns"] = mount_points.namespace(kernel.fs, fs_view(proc)).copy(_inum(kernel))
    if flags & CLONE_NEWUTS:
        uts = copy.copy(uts_of(kernel, proc))
        uts.inum = _inum(kernel)
        made["uts_ns"] = uts
    if flags & CLONE_NEWIPC:
        from ..ipc.namespace import IpcNamespace
        ipc = IpcNamespace(kernel.wakeup)
        ipc.inum = _inum(kernel)
        made["ipc_ns"] = ipc
    return made


def _inum(kernel) -> int:
    return kernel.time_namespaces.inum()
