"""Host I/O (vFile) in `trapline gdbserver` (trapline/gdbserver/host_io.py), on both arches.

With the vDSO's AT_SYSINFO_EHDR in the auxv, real gdb reads /proc/PID/task/PID/maps over vFile
to find the vDSO's extent; without vFile it warned "unable to open /proc file". Now: no warning,
the vDSO's symbols loaded (system-supplied DSO), `info proc mappings` read from the guest's
/proc, and with a rootfs gdb reads the shared libraries from the guest ("Reading ... from remote
target...", as from gdbserver) and backtraces from a signal handler through the signal frame
to main (on i386 through the vDSO's __kernel_sigreturn and __kernel_vsyscall, by their CFI).
The packets themselves, scripted: setfs, open, pread, pwrite, fstat, close, readlink, unlink,
and the File-I/O errno of each refusal."""
import re
import struct

import pytest

from loader.auxv import AT_SYSINFO_EHDR
from tests.e2e.debian_bins import ARCHES as DEBIAN_ARCHES
from tests.e2e.gdb.test_gdbserver_protocol import ARCHES, PID, sample, started  # noqa: F401
from tests.e2e.gdb_batch import gdb_batch
from tests.e2e.rootfs_variants import EXTRA_DIR, SAMPLE_ARCH
from trapline.gdbserver.packets import escape, unescape

pytestmark = pytest.mark.e2e
WARNING = "unable to open /proc file"


def _ask_file(gdb, packet: str) -> tuple[int, bytes]:
    """(result, attachment) of an F reply; a failure's result is -errno (File-I/O's)."""
    reply = gdb.ask(packet.encode())
    assert reply.startswith(b"F"), reply
    head, _, attachment = reply[1:].partition(b";")
    if head.startswith(b"-1,"):
        return -int(head[3:], 16), b""
    return int(head, 16), unescape(attachment)


def _read_all(gdb, fd: int) -> bytes:
    data = b""
    while True:
        count, chunk = _ask_file(gdb, f"vFile:pread:{fd:x},100,{len(data):x}")
        assert count == len(chunk)
        if not count:
            return data
        data += chunk


@pytest.mark.parametrize("arch", ARCHES)
def test_host_io_packets_read_the_guest_s_files(started, arch):  # noqa: F811
    gdb = started(arch)
    gdb.write(b"+")
    gdb.ask(b"qSupported:multiprocess+")
    gdb.no_ack()
    word = 8 if arch == "x86_64" else 4
    auxv = dict(struct.iter_unpack("<QQ" if word == 8 else "<II", gdb.xfer("auxv", "")))
    assert _ask_file(gdb, "vFile:setfs:0") == (0, b"")
    maps = f"/proc/{PID}/task/{PID}/maps".encode().hex()
    fd, _ = _ask_file(gdb, f"vFile:open:{maps},0,1c0")
    assert fd >= 0
    lines = _read_all(gdb, fd).decode().splitlines()
    vdso = [line for line in lines if line.endswith("[vdso]")]
    assert len(vdso) == 1 and int(vdso[0].split("-")[0], 16) == auxv[AT_SYSINFO_EHDR]
    size, stat = _ask_file(gdb, f"vFile:fstat:{fd:x}")
    assert size == len(stat) == 64
    mode = struct.unpack_from(">I", stat, 8)[0]
    assert mode & 0o170000 == 0o100000                  # a regular file, as /proc's are
    assert _ask_file(gdb, f"vFile:close:{fd:x}") == (0, b"")
    assert _ask_file(gdb, f"vFile:pread:{fd:x},10,0")[0] == -9      # EBADF once closed
    assert _ask_file(gdb, f"vFile:open:{b'/no/such/file'.hex()},0,0")[0] == -2   # ENOENT
    assert _ask_file(gdb, f"vFile:setfs:{PID:x}") == (0, b"")
    exe = gdb.xfer("exec-file", f"{PID:x}")
    assert _ask_file(gdb, f"vFile:readlink:{f'/proc/{PID}/exe'.encode().hex()}") == (len(exe), exe)
    assert _ask_file(gdb, "vFile:setfs:63")[0] == -9999  # no such process: ESRCH, File-I/O's EUNKNOWN
    assert gdb.ask(b"vFile:nosuchthing:0") == b""
    assert gdb.ask(b"vKill;64") == b"OK"


@pytest.mark.parametrize("arch", ARCHES)
def test_a_written_file_reads_back_and_unlink_removes_it(started, arch):  # noqa: F811
    gdb = started(arch)
    gdb.write(b"+")
    gdb.no_ack()
    name = b"/tmp/vfile-test".hex()
    # File-I/O flags: O_CREAT 0x200 | O_TRUNC 0x400 | O_RDWR 2; mode 0600
    fd, _ = _ask_file(gdb, f"vFile:open:{name},602,180")
    assert fd >= 0
    data = b"#$}* bytes the protocol escapes"
    gdb.send(f"vFile:pwrite:{fd:x},0,".encode() + escape(data))
    assert gdb.reply() == f"F{len(data):x}".encode()
    assert _read_all(gdb, fd) == data
    assert _ask_file(gdb, f"vFile:close:{fd:x}") == (0, b"")
    assert _ask_file(gdb, f"vFile:unlink:{name}") == (0, b"")
    assert _ask_file(gdb, f"vFile:open:{name},0,0")[0] == -2
    assert gdb.ask(b"vKill;64") == b"OK"


@pytest.mark.parametrize("arch", ARCHES)
def test_gdb_loads_the_vdso_without_a_warning(arch):
    out = gdb_batch(str(sample(arch, "fib")), ["info symbol __vdso_time", "info proc mappings", "kill"],
                    args=("3",))
    assert WARNING not in out, out
    found = re.search(r"__vdso_time in section \.text of system-supplied DSO at (0x[0-9a-f]+)", out)
    assert found, out
    vdso = [line.split() for line in out.splitlines() if line.rstrip().endswith("[vdso]")]
    assert len(vdso) == 1 and int(vdso[0][0], 16) == int(found.group(1), 16), out


@pytest.mark.parametrize("arch", DEBIAN_ARCHES)
def test_gdb_reads_libraries_from_the_guest_and_unwinds_a_handler_to_main(arch, dyn_samples_rootfs):
    root = dyn_samples_rootfs(arch)
    program = f"/{EXTRA_DIR}/relocate_frames-pie"
    out = gdb_batch(str(root / program.lstrip("/")),
                    ["handle SIGUSR1 nostop noprint pass", "break on_usr1", "continue", "bt", "kill"],
                    options=("--rootfs", str(root), "--clear-env"), guest_program=program)
    assert WARNING not in out, out
    libc = "i386-linux-gnu" if SAMPLE_ARCH[arch] == "i386" else "x86_64-linux-gnu"
    assert f"Reading /lib/{libc}/libc.so.6 from remote target..." in out, out
    text = "\n".join(line for line in out.splitlines() if line.startswith("#"))
    assert "on_usr1 ()" in text.splitlines()[0] and "<signal handler called>" in text.splitlines()[1], out
    assert re.search(r"in signalled \(\)\n#\d+ +0x[0-9a-f]+ in main \(\)$", text), out
    if SAMPLE_ARCH[arch] == "i386":        # glibc's i386 sigaction leaves the restorer to the vDSO
        assert "in __kernel_vsyscall ()" in text.splitlines()[2], out
