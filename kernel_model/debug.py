"""The debug interface: what a tool may observe of the kernel (as ptrace/uprobes offer).

Events are delivered synchronously, in the order they happen, to every subscriber:
  pre_fork(parent, child_pid, vfork)   before the child exists, with the pid it will get
  fork(parent, child), vfork(parent, child)
  vfork_done(parent, child)            the vfork parent is about to resume
  exec(process, path, argv)            after a successful execve committed the new image
  exit(process, status)                a process became a zombie (wait status word)
  signal(process, thread, signal, info) a signal is delivered (or takes its default action)
A subscriber is any object with methods of those names (missing ones are skipped).
"""


class DebugInterface:
    EVENTS = ("pre_fork", "fork", "vfork", "vfork_done", "exec", "exit", "signal")

    def __init__(self):
        self.subscribers: list = []

    def subscribe(self, subscriber) -> None:
        self.subscribers.append(subscriber)

    def _emit(self, event: str, *args, **kwargs) -> None:
        for subscriber in self.subscribers:
            handler = getattr(subscriber, event, None)
            if handler is not None:
                handler(*args, **kwargs)

    def pre_fork(self, parent, child_pid: int, *, vfork: bool) -> None:
        self._emit("pre_fork", parent, child_pid, vfork=vfork)

    def fork(self, parent, child) -> None:
        self._emit("fork", parent, child)

    def vfork(self, parent, child) -> None:
        self._emit("vfork", parent, child)

    def vfork_done(self, parent, child) -> None:
        self._emit("vfork_done", parent, child)

    def exec(self, process, path: bytes, argv) -> None:
        self._emit("exec", process, path, argv)

    def exit(self, process, status: int) -> None:
        self._emit("exit", process, status)

    def signal(self, process, thread, signal: int, info: dict | None = None) -> None:
        self._emit("signal", process, thread, signal, info)
