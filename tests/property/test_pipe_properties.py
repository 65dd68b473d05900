"""Random pipelines between forked processes carry every byte, in order (issue 13).

Each example is one busybox ``sh -c`` pipeline: a source that writes the first N bytes of the
rootfs's /work/blob.bin into a pipe in one of three ways — ``cat`` (sendfile from a file into the
pipe), ``dd bs=W`` (write(2) of W-byte chunks) or ``head -c N`` (read/write through a buffer) —
then 1-3 stages that read the pipe with a drawn chunk size (``dd bs=R``, short reads passed on
as short writes) or copy it with ``cat`` (sendfile from a pipe), and maybe a last ``head -c M``
that closes its end early (the writers before it then die of SIGPIPE, which the pipeline's
status does not show). Every stage is a forked child of the shell; the scheduler's quantum is
drawn too, so writers and readers meet the pipe full, empty and in between.

The oracle is the generator: stdout must be exactly blob[:min(N, M)].
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.e2e.conftest import build_rootfs, deterministic_bytes
from tests.e2e.debian_bins import ARCHES, DebianBinsError, ensure_debian_bins
from tests.e2e.sandbox_options import run_sandbox_with_options
from tests.e2e.sandbox_runner import FIXED_ENV

pytestmark = pytest.mark.e2e

CAPACITY = 65536                          # Linux's default pipe size (pipe(7))
BLOB = deterministic_bytes(2 * 1024 * 1024)   # conftest writes this as /work/blob.bin
# Chunk sizes around the interesting boundaries: PIPE_BUF (4096) and the capacity. Tiny chunks
# would make an example of 200 000 bytes cost 400 000 emulated system calls per stage.
CHUNKS = st.one_of(st.sampled_from([4095, 4096, 4097, CAPACITY, CAPACITY + 1, 100_000]),
                   st.integers(100, 9000))
# Sizes past one and several capacities first: a derandomized run draws mostly from the first
# strategies, and it is there that a full pipe meets a writer.
SIZES = st.one_of(st.sampled_from([CAPACITY + 1, 2 * CAPACITY + 3, 0, 1, CAPACITY]),
                  st.integers(CAPACITY, 3 * CAPACITY), st.integers(0, 5000))


def source(kind: str, size: int, chunk: int) -> str:
    if kind == "cat":
        return "cat /tmp/src"
    if kind == "dd":
        return f"dd if=/tmp/src bs={chunk} 2>/dev/null"
    return f"head -c {size} /work/blob.bin"


def stage(kind: str, chunk: int) -> str:
    return "cat" if kind == "cat" else f"dd bs={chunk} 2>/dev/null"


@st.composite
def pipelines(draw) -> tuple[str, int]:
    """(script, number of bytes it must print)."""
    size = draw(SIZES)
    first = source(draw(st.sampled_from(["cat", "dd", "head"])), size, draw(CHUNKS))
    stages = [stage(draw(st.sampled_from(["dd", "cat"])), draw(CHUNKS))
              for _ in range(draw(st.integers(1, 3)))]
    expected = size
    if draw(st.integers(0, 3)) == 0:
        expected = min(size, draw(SIZES))
        stages.append(f"head -c {expected}")
    script = f"head -c {size} /work/blob.bin > /tmp/src; " + " | ".join([first, *stages])
    return script, expected


@pytest.fixture(scope="module")
def rootfs_by_arch(tmp_path_factory) -> dict[str, Path]:
    try:
        binaries = ensure_debian_bins()
    except DebianBinsError as error:
        pytest.fail(f"Debian static binaries unavailable: {error}", pytrace=False)
    return {
        arch: build_rootfs(tmp_path_factory.mktemp(f"pipe-rootfs-{arch}"), binaries[arch])
        for arch in ARCHES
    }


# One emulated pipeline per example (a short run): the profile's count applies (ci: 30
# derandomized examples), reaching both arches, all sources and sizes past capacity.
@given(pipeline=pipelines(), arch=st.sampled_from(ARCHES),
       quantum=st.sampled_from([997, 20_000, 200_000]))
def test_pipelines_carry_every_byte(rootfs_by_arch, pipeline, arch, quantum):
    script, expected = pipeline
    result = run_sandbox_with_options(["/bin/sh", "-c", script], ["--quantum", str(quantum)],
                                      rootfs=rootfs_by_arch[arch], env=FIXED_ENV)
    assert (result.returncode, result.stderr) == (0, b""), f"{script}\n{result.describe()}"
    assert result.stdout == BLOB[:expected], (
        f"{script}\n--quantum {quantum}: {len(result.stdout)} bytes, expected {expected}; "
        f"first difference at {_first_difference(result.stdout, BLOB[:expected])}"
    )


def _first_difference(actual: bytes, expected: bytes) -> int:
    for index, (a, b) in enumerate(zip(actual, expected)):
        if a != b:
            return index
    return min(len(actual), len(expected))
