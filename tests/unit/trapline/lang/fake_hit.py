"""A hit without a guest, for the evaluator's tests: the built-ins are plain attributes."""
import io

from trapline.lang.consumer import Consumer


class FakeHit:
    def __init__(self, *, pid=7, tid=8, comm="prog", args=(), retval=None, probe="uprobe:/p:f",
                 func="f", nsecs=1000, syscall="", fields=None):
        self.pid, self.tid, self.comm, self.retval = pid, tid, comm, retval
        self.probe, self.func, self.nsecs, self.syscall = probe, func, nsecs, syscall
        self._args, self._fields = tuple(args), dict(fields or {})
        self.thread = self.process = None

    def arg(self, index):
        return self._args[index] if index < len(self._args) else 0

    def named_arg(self, field):
        return self._fields.get(field)


def consumer(text: str) -> tuple[Consumer, io.StringIO, list]:
    out, reports = io.StringIO(), []
    return Consumer(text, "-e", out, stacks=None, report=reports.append), out, reports


def fire_all(made: Consumer, hit) -> None:
    """Every block of the program on `hit`, BEGIN and END excepted."""
    for block in made.blocks:
        if not any(a.kind in ("BEGIN", "END") for a in block.attaches):
            made.fire(block, hit)
