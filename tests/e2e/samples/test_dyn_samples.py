"""The committed dynamically linked samples (samples/dyn/): integrity, shape, and their
native output on the Debian rootfs, which is what trapline must reproduce (issue 14).

Every program exists as NAME (non-PIE) and NAME-pie for both arches, and all four print
exactly samples/dyn/expected/NAME.out natively. The rebuild-and-compare check runs with
the static samples' (tests/e2e/samples/test_samples_build.py runs build.py --check).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.native_oracle import run_in_rootfs
from tests.e2e.rootfs_variants import EXTRA_DIR, SAMPLE_ARCH
from tests.quick_profile import alternates

SAMPLES_DIR = Path(__file__).resolve().parents[3] / "samples"
DYN_DIR = SAMPLES_DIR / "dyn"
PROGRAMS = ("cxx_throw", "dlopen_cos", "hello", "interpose", "malloc_count", "relocate_frames",
            "strlen_calls", "tls")
VARIANTS = ("", "-pie")


def _build_dyn():
    # samples/ is not a package: build_dyn.py imports build.py by plain name, as when
    # build.py runs as a script.
    if str(SAMPLES_DIR) not in sys.path:
        sys.path.insert(0, str(SAMPLES_DIR))
    import build_dyn

    return build_dyn


def test_every_program_has_sources_binaries_and_expected_output():
    build_dyn = _build_dyn()
    assert sorted(build_dyn.program_names()) == list(PROGRAMS)
    committed = sorted(f"{p.parent.name}/{p.name}" for p in (DYN_DIR / "bin").glob("*/*"))
    assert committed == sorted(
        f"{arch}/{name}" for arch in SAMPLE_ARCH.values()
        for name in build_dyn.output_names(list(PROGRAMS))
    )
    assert sorted(p.stem for p in (DYN_DIR / "expected").glob("*.out")) == list(PROGRAMS)


def test_sha256sums_lists_exactly_the_committed_files():
    sums = {}
    for line in (DYN_DIR / "bin" / "SHA256SUMS").read_text().splitlines():
        digest, relative = line.split("  ", 1)
        sums[relative] = digest
    on_disk = sorted(f"{p.parent.name}/{p.name}" for p in (DYN_DIR / "bin").glob("*/*"))
    assert sorted(sums) == on_disk
    for relative, digest in sums.items():
        assert hashlib.sha256((DYN_DIR / "bin" / relative).read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("arch", SAMPLE_ARCH.values())
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", PROGRAMS)
@alternates("arch")
def test_binary_is_dynamic_of_its_arch_and_type(arch, variant, name):
    build_dyn = _build_dyn()
    path = DYN_DIR / "bin" / arch / f"{name}{variant}"
    assert build_dyn.check_program(path, arch, variant == "-pie", []) == []


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", PROGRAMS)
@alternates("arch")
def test_native_output_is_the_expected_one(arch, variant, name, dyn_samples_rootfs):
    done = run_in_rootfs([f"/{EXTRA_DIR}/{name}{variant}"], root=dyn_samples_rootfs(arch))
    assert (done.returncode, done.stderr) == (0, b""), done.describe()
    assert done.stdout == (DYN_DIR / "expected" / f"{name}.out").read_bytes()


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ARCHES)
def test_malloc_count_counts_what_it_is_told(arch, dyn_samples_rootfs):
    done = run_in_rootfs([f"/{EXTRA_DIR}/malloc_count-pie", "2500"], root=dyn_samples_rootfs(arch))
    assert (done.returncode, done.stderr) == (0, b""), done.describe()
    assert done.stdout.splitlines()[0] == b"malloc calls: 2500"
