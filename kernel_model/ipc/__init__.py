"""System V IPC (ipc/ in Linux): message queues, semaphore sets and shared memory segments.

The run's first IPC namespace is kernel.ipc, and unshare or clone (CLONE_NEWIPC) give a
process an empty one of its own (process/namespaces.py ipc_of); each kind has its table of
objects by key and id (ids.py, after ipc/util.c), their permissions (ipcperms) and their
struct *_ds layouts per ABI (layouts.py). msg.py and sem.py hold the queues and sets and their
operations; the system calls that reach them are in syscalls/impls/sysv_*.py, i386's ipc(2)
multiplexer in syscalls/impls/sysv_ipc.py.
"""
