"""Debian's busybox on the calls that answered ENOSYS before issue 13: hostname, stat -f, df
(with /proc/mounts), ionice, renice, dmesg, date -s, adjtimex, the shell's times, mount and
unshare (both arches).

The native reference runs as real root here (all capabilities), so privileged answers
(sethostname, settimeofday, clearing the kernel log) would change the host or differ by
design: these cases are checked against the sandbox's documented model (kernel_model/creds.py)
— root holds every capability, so priorities behave as natively and the kernel log's
restricted actions work over an empty log, while setting the clock stays refused
(kernel_model/syscalls/impls/{utsname,clockset,syslog}.py).
"""
from __future__ import annotations

import re

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_runner import FIXED_ENV, run_sandbox

pytestmark = pytest.mark.e2e


def sh(arch, rootfs_for, script: str):
    result = run_sandbox(["/bin/sh", "-c", script], rootfs=rootfs_for(arch), env=FIXED_ENV,
                         clear_env=True)
    assert b"unimplemented syscall" not in result.stderr, result.describe()
    return result


@pytest.mark.parametrize("arch", ARCHES)
def test_hostname_sets_the_uts_name_uname_reports(arch, rootfs_for):
    result = sh(arch, rootfs_for, "hostname; hostname box.example; hostname; uname -n; "
                                  "sh -c 'uname -n'")
    assert result.stdout == b"trapline\nbox.example\nbox.example\nbox.example\n"
    assert result.returncode == 0


@pytest.mark.parametrize("arch", ARCHES)
def test_stat_f_names_each_mount(arch, rootfs_for):
    # busybox names no overlayfs magic (UNKNOWN, as under Docker's overlay root); sizes are
    # the modeled ones: the default 4 GiB memory budget in 4 KiB blocks, half of it for /dev
    result = sh(arch, rootfs_for, "stat -f -c '%T %s %b %l' / /proc /dev")
    assert result.stdout == b"UNKNOWN 4096 1048576 255\nproc 4096 0 255\ntmpfs 4096 524288 255\n"


@pytest.mark.parametrize("arch", ARCHES)
def test_df_finds_the_mounts_and_their_sizes(arch, rootfs_for):
    # /proc/mounts lists the modeled mounts; df leaves out /proc (0 blocks) as natively.
    # What is used is the live address spaces' share of the budget: only the sum is fixed.
    result = sh(arch, rootfs_for, "df -P -k; df -k /bin | tail -n 1")
    lines = [line.split() for line in result.stdout.decode().splitlines()]
    assert [(f[0], f[1], f[5]) for f in lines[1:]] == [
        ("overlay", "4194304", "/"), ("devtmpfs", "2097152", "/dev"), ("overlay", "4194304", "/")]
    for fields in lines[1:]:
        assert int(fields[2]) + int(fields[3]) == int(fields[1])


@pytest.mark.parametrize("arch", ARCHES)
def test_io_and_cpu_priorities(arch, rootfs_for):
    result = sh(arch, rootfs_for, "ionice -p $$; ionice -c 3 sh -c 'ionice -p $$'; "
                                  "ionice -c 2 -n 6 sh -c 'ionice -p $$'; "
                                  "ionice -c 1 true; echo rt=$?; "
                                  "renice -n 4 -p $$ && echo reniced; renice -n -4 -p $$; echo $?")
    # root holds CAP_SYS_NICE: the real-time class and a lower nice value are its to take
    assert result.stdout == (b"none: prio 0\nidle\nbest-effort: prio 6\nrt=0\nreniced\n0\n")
    assert b"Operation not permitted" not in result.stderr
    assert b"Permission denied" not in result.stderr


@pytest.mark.parametrize("arch", ARCHES)
def test_dmesg_reads_and_clears_an_empty_log(arch, rootfs_for):
    result = sh(arch, rootfs_for, "dmesg; echo read=$?; dmesg -c; echo clear=$?")
    assert result.stdout == b"read=0\nclear=0\n"
    assert result.stderr == b""


@pytest.mark.parametrize("arch", ARCHES)
def test_the_clock_cannot_be_set(arch, rootfs_for):
    # busybox date reports the failure and still exits 0; adjtimex only reads (modes 0)
    result = sh(arch, rootfs_for, "date -s 2020-01-01 >/dev/null; "
                                  "adjtimex | grep -v -e offset -e freq -e tv_")
    assert result.stderr == b"date: can't set date: Operation not permitted\n"
    assert result.stdout == (b"    mode:         0\n    maxerror:     16000000\n"
                             b"    esterror:     16000000\n    status:       64 (UNSYNC)\n"
                             b"-p  timeconstant: 2\n    precision:    1 us\n"
                             b"    tolerance:    32768000\n-t  tick:         10000 us\n"
                             b"    return value: 5 (clock not synchronized)\n")


@pytest.mark.parametrize("arch", ARCHES)
def test_times_and_administration(arch, rootfs_for):
    """busybox's mount makes a tmpfs in the sandbox (/proc/mounts lists it, as the host's
    would: source, point, type, options) and unshare -m runs its program in a new mount
    namespace; the host's /tmp is untouched (the sandbox's tree is the overlay)."""
    result = sh(arch, rootfs_for, "times; mount -t tmpfs none /tmp; echo mount=$?; "
                                  "grep ' /tmp ' /proc/mounts; unshare -m true; echo unshare=$?")
    lines = result.stdout.decode().splitlines()
    assert all(re.fullmatch(r"\dm\d\.\d{3}s \dm\d\.\d{3}s", line) for line in lines[:2]), lines
    assert lines[2:] == ["mount=0", "none /tmp tmpfs rw,relatime 0 0", "unshare=0"]
    assert result.stderr == b""
