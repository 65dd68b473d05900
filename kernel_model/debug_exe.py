"""Which program file a process runs: /proc/PID/exe for a debugger (GDB reads the program's
symbols from it at start and after every exec: qXfer:exec-file:read, the exec stop reply).
Part of the debug interface (kernel_model/debug.py), mixed into DebugInterface.

The model keeps paths global (kernel_model/fsview.py): the global path names the file in the
tree the sandbox sees, which is where a debugger on the same host finds it; a process's own
view of it (readlink("/proc/self/exe")) is the same path seen from the process's root.
"""


class ExecutableAccess:
    @staticmethod
    def executable_path(process) -> bytes:
        """The global path of the program file `process` runs (its last successful exec)."""
        return process.exe
