"""The modeled file system: chroot-like rootfs (in-memory overlay or write-through), /dev, /proc.

    fs = FileSystem("rootfs-dir", seed=1, clock=clock.now_ns)
    f = fs.open(b"/etc/passwd", O_RDONLY, 0, cwd=b"/", proc=process)
"""
from .constants import *  # noqa: F401,F403  (O_*, S_IF*, DT_*, SEEK_* as the guest sees them)
from .filesystem import FileSystem
from .openfile import OpenFile
from .proctext import ProcessView
from .randomstream import DeterministicRandom
from .records import DirEntry, StatResult
from .stdio import CapturedOutput, StdioFile

__all__ = ["FileSystem", "OpenFile", "ProcessView", "DeterministicRandom", "DirEntry",
           "StatResult", "CapturedOutput", "StdioFile"]
