"""A stripped program's main, from what its `_start` hands the C library (issue 18: the walk-up
stops at main; instrumenter/profiler/start_code.py). Debian's programs are stripped: main is the
program function glibc's start code calls, which every complete stack shows as the outermost
frame of the program above libc's (`_start` -> __libc_start_main -> __libc_start_call_main ->
main), an oracle independent of the decoding."""
import pytest

from instrumenter.profiler.callsite import Functions
from instrumenter.profiler.sampler import Sampler
from instrumenter.profiler.start_code import main_of
from trapline.sandbox import Sandbox

ARGV = ["/usr/bin/sort", "/usr/share/common-licenses/GPL-3"]


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_main_is_what_libc_start_code_calls(debian_rootfs, deb_arch):
    found, samples = {}, []

    def attach(kernel, process):
        door = kernel.debug
        Sampler(door, interval=5_000, on_sample=samples.append).attach(process)

        class AtExit:
            def syscall_entry(self, thread, name, args):
                if name == "exit_group":      # (the ticks before it are delivered by now)
                    functions = Functions(door)
                    found["main"] = main_of(door, thread.process)
                    found["function"] = functions.at(thread.process, found["main"])
                    # a return address: the call before it is in the function that called
                    found["callers"] = {functions.at(thread.process, a - 1).entry
                                        for a in _outermost(samples)}

            def syscall_exit(self, *args):
                pass

        door.syscall_watchers.append(AtExit())

    result = Sandbox(rootfs=str(debian_rootfs[deb_arch]), tools=[attach]).run(ARGV)
    assert result.exit_code == 0 and found["main"] is not None
    assert found["function"].name == "main" and found["function"].entry == found["main"]
    assert _outermost(samples) and found["callers"] == {found["main"]}


def _outermost(samples) -> set[int]:
    """The return addresses into the program from libc's start code (five frames at least, so
    not an interrupted PC): the stacks end ..., main's frame, libc's __libc_start_call_main,
    __libc_start_main, the program's _start."""
    return {s.frames[-4].address for s in samples if not s.truncated and len(s.frames) >= 5
            and s.frames[-1].module == "sort" and s.frames[-3].module == "libc.so.6"
            and s.frames[-4].module == "sort"}
