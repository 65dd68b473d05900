"""A pipe to a forked child carries every byte: busybox tar's compressor round trip.

``tar -czf`` forks and execs ``gzip`` with a pipe as its stdin, then copies each member into
that pipe with sendfile(2); ``tar -xzf`` forks a decompressor and reads its output from a pipe,
again with sendfile into the extracted file. A member larger than the pipe's capacity makes
sendfile meet a full pipe: Linux waits for room and then reads from the file only what fits
(fs/splice.c, splice_file_to_pipe), so no byte is read and dropped. Issue 13 was the model's
sendfile reading the whole count and losing what the pipe did not take ("short read").

Sizes: empty, one byte, just below / at / above a pipe's capacity once the 512-byte tar header
is in it, and several capacities. The extracted bytes must equal the original byte for byte, and
the native run of the same script (chrooted into the same rootfs) must print the same.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.e2e.conftest import deterministic_bytes
from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_runner import FIXED_ENV, assert_same_behaviour, run_native, run_sandbox
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

CAPACITY = 65536                 # Linux's default pipe size (pipe(7))
SIZES = (0, 1, CAPACITY - 512, CAPACITY, 100_000, 3 * CAPACITY + 7)


def roundtrip_script(size: int) -> str:
    """Archive the first ``size`` bytes of /work/blob.bin, delete them, extract, print them."""
    return (
        f"cd /tmp && head -c {size} /work/blob.bin > F0 && tar -czf F0.tgz F0 && rm F0 && "
        "tar -xzf F0.tgz && md5sum F0 && cat F0"
    )


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_tar_gzip_roundtrip_through_child_pipes(arch, size, fresh_rootfs, native_arch):
    argv = ["/bin/sh", "-c", roundtrip_script(size)]
    native = run_native(argv, rootfs_dir=fresh_rootfs(native_arch[arch], "native-root"),
                        env=FIXED_ENV)
    original = deterministic_bytes(2 * 1024 * 1024)[:size]
    expected = f"{hashlib.md5(original).hexdigest()}  F0\n".encode() + original
    assert (native.returncode, native.stdout) == (0, expected), native.describe()
    sandbox = run_sandbox(argv, rootfs=fresh_rootfs(arch, "sandbox-root"), env=FIXED_ENV,
                          clear_env=True)
    assert_same_behaviour(sandbox, native)
