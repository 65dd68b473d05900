"""How many probes "Attaching N probes..." counts, as bpftrace counts them: one per attach
point, a wildcard being as many probes as it matches (bpftrace's probe matcher expands
`uprobe:BIN:str*` into one probe per matched function and `sys_enter_*` into one per system
call; BEGIN and END count too). The matches are those `trapline trace -l` lists (listing.py):
a tracepoint wildcard over both ABIs' system calls, a uprobe wildcard over the function
symbols of BIN read from the host. A BIN named as a library (libc.so.6) is found only when the
run maps it, after the line is printed: such a wildcard counts as one probe.
"""
import fnmatch
import os

from .listing import file_functions, tracepoints


def probes_of(attach) -> int:
    """The probes one attach point makes (at least 1: a wildcard matching nothing is reported
    at the end, as an attach point that found nothing)."""
    if not attach.wildcard:
        return 1
    if attach.kind == "tracepoint" and not attach.raw:
        side = "enter" if attach.entry else "exit"
        return max(1, sum(fnmatch.fnmatchcase(line.rpartition(f"sys_{side}_")[2], attach.syscall)
                          for line in tracepoints() if f":sys_{side}_" in line))
    if attach.kind in ("uprobe", "uretprobe") and os.path.isfile(attach.binary):
        names = [line.rpartition(":")[2] for line in file_functions(attach.binary)]
        return max(1, sum(fnmatch.fnmatchcase(name, attach.function) for name in names))
    return 1
