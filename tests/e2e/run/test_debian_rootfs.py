"""The Debian userland rootfs and its native oracle do what the dynamic e2e tests rely on.

These test the test infrastructure itself (issue 14): the package closure apt computed,
the merged-/usr layout with the right ELF interpreter per arch, the /etc files and loader
cache the maintainer scripts would have made, and a native oracle that really runs the
rootfs's dynamically linked programs on their own libraries, read-only, with a private
/tmp, and reports ld.so's own error for a missing library.
"""

from __future__ import annotations

import pytest

from tests.e2e.deb_extract import merged_path
from tests.e2e.debian_bins import ARCHES
from tests.e2e.debian_rootfs import ROOT_PACKAGES, installed_packages
from tests.e2e.native_oracle import run_host, run_in_rootfs
from tests.e2e.rootfs_variants import linked_copy, remove_paths

pytestmark = pytest.mark.e2e

INTERPRETER = {"amd64": "/lib64/ld-linux-x86-64.so.2", "i386": "/lib/ld-linux.so.2"}
LIBDIR = {"amd64": "/usr/lib/x86_64-linux-gnu", "i386": "/usr/lib/i386-linux-gnu"}
ELF_MACHINE = {"amd64": 62, "i386": 3}  # EM_X86_64, EM_386 (e_machine, ELF gABI)


def test_merged_path_follows_usrmerge():
    assert merged_path("./bin/ls") == "usr/bin/ls"
    assert merged_path("./lib64/ld-linux-x86-64.so.2") == "usr/lib64/ld-linux-x86-64.so.2"
    assert merged_path("./usr/bin/env") == "usr/bin/env"
    assert merged_path("./etc/ld.so.conf") == "etc/ld.so.conf"
    assert merged_path("./") == ""
    assert merged_path("./library/x") == "library/x"  # only whole first components move


@pytest.mark.parametrize("arch", ARCHES)
def test_closure_holds_every_root_package_of_the_arch(arch, debian_rootfs):
    packages = installed_packages(arch)
    names = {p.name for p in packages}
    assert set(ROOT_PACKAGES) <= names, sorted(set(ROOT_PACKAGES) - names)
    # Dependencies apt added (readline-common, libonig5, ...) are there too, and nothing
    # is of another arch (arch-independent packages are "all").
    assert {"libonig5", "libjq1", "readline-common"} <= names
    assert {p.arch for p in packages} <= {arch, "all"}


@pytest.mark.parametrize("arch", ARCHES)
def test_layout_is_merged_usr_with_the_arch_interpreter(arch, debian_rootfs):
    root = debian_rootfs[arch]
    for top in ("bin", "sbin", "lib"):
        assert (root / top).is_symlink() and str((root / top).readlink()) == f"usr/{top}"
    interpreter = root / INTERPRETER[arch].lstrip("/")
    assert interpreter.exists(), f"{INTERPRETER[arch]} missing"
    env = (root / "usr/bin/env").read_bytes()
    assert env[:4] == b"\x7fELF" and int.from_bytes(env[18:20], "little") == ELF_MACHINE[arch]
    # A dynamically linked program naming that interpreter (PT_INTERP's string).
    assert INTERPRETER[arch].encode() + b"\0" in env[:4096]
    assert (root / LIBDIR[arch].lstrip("/") / "libc.so.6").exists()


@pytest.mark.parametrize("arch", ARCHES)
def test_etc_files_and_loader_cache(arch, debian_rootfs):
    root = debian_rootfs[arch]
    assert "user:x:1000:1000:" in (root / "etc/passwd").read_text()
    assert (root / "etc/nsswitch.conf").read_text().startswith("#")
    assert (root / "etc/ld.so.cache").stat().st_size > 0
    assert not (root / "var/cache/ldconfig/aux-cache").exists()
    assert str((root / "usr/bin/awk").readlink()) == "/etc/alternatives/awk"


@pytest.mark.parametrize("arch", ARCHES)
def test_oracle_runs_dynamic_env_with_exactly_the_given_environment(arch, debian_rootfs):
    env = {"PATH": "/usr/bin:/bin", "ZETA": "last", "ALPHA": "1 2"}
    done = run_in_rootfs(["/usr/bin/env"], root=debian_rootfs[arch], env=env)
    assert (done.returncode, done.stderr) == (0, b""), done.describe()
    assert done.stdout == b"PATH=/usr/bin:/bin\nZETA=last\nALPHA=1 2\n"


@pytest.mark.parametrize("arch", ARCHES)
def test_oracle_uses_the_rootfs_loader_cache_and_etc(arch, debian_rootfs):
    script = ("/sbin/ldconfig -p | grep -c 'libc.so.6 '; id user; getent group users; "
              "echo é | iconv -f UTF-8 -t ISO-8859-1 | od -An -tx1")
    done = run_in_rootfs(["/bin/sh", "-c", script], root=debian_rootfs[arch])
    assert (done.returncode, done.stderr) == (0, b""), done.describe()
    assert done.stdout.decode().split("\n") == [
        "1",
        "uid=1000(user) gid=1000(user) groups=1000(user),100(users)",
        "users:x:100:user",
        " e9 0a",
        "",
    ]


@pytest.mark.parametrize("arch", ARCHES)
def test_oracle_keeps_the_rootfs_read_only_and_tmp_private(arch, debian_rootfs):
    root = debian_rootfs[arch]
    script = "echo data > /tmp/f && cat /tmp/f; touch /new-file; echo status $?"
    done = run_in_rootfs(["/bin/bash", "-c", script], root=root)
    assert done.returncode == 0, done.describe()
    assert done.stdout == b"data\nstatus 1\n"
    assert done.stderr == b"touch: cannot touch '/new-file': Read-only file system\n"
    assert list((root / "tmp").iterdir()) == []


@pytest.mark.parametrize("arch", ARCHES)
def test_oracle_gives_ld_so_message_for_a_missing_library(arch, debian_rootfs, tmp_path):
    root = linked_copy(debian_rootfs[arch], tmp_path / "root")
    remove_paths(root, [f"{LIBDIR[arch]}/libonig.so.5"])
    done = run_in_rootfs(["/usr/bin/jq", "-n", "1"], root=root)
    assert done.returncode == 127
    assert done.stdout == b""
    assert done.stderr == (
        b"/usr/bin/jq: error while loading shared libraries: libonig.so.5: "
        b"cannot open shared object file: No such file or directory\n"
    )
    # The cache's own copy of the library is untouched.
    assert (debian_rootfs[arch] / LIBDIR[arch].lstrip("/") / "libonig.so.5").exists()


@pytest.mark.parametrize("arch", ARCHES)
def test_oracle_float_formatting_and_exit_statuses(arch, debian_rootfs):
    script = (
        "printf '%.3f %g %e\\n' 3.14159 0.0001 12345.678; "
        "awk 'BEGIN { printf \"%.10f\\n\", atan2(0, -1) }'; "
        "echo 'scale=20; 1/7' | bc; perl -e 'printf qq(%.15g\\n), 0.1 + 0.2'; "
        "jq -n '[1.5, 1e308 * 10, 3 / 2]' -c; (exit 3); echo $?"
    )
    done = run_in_rootfs(["/bin/bash", "-c", script], root=debian_rootfs[arch])
    assert (done.returncode, done.stderr) == (0, b""), done.describe()
    assert done.stdout == (
        b"3.142 0.0001 1.234568e+04\n3.1415926536\n.14285714285714285714\n0.3\n"
        b"[1.5,1.7976931348623157e+308,1.5]\n3\n"
    )


def test_host_oracle_runs_host_programs(tmp_path):
    (tmp_path / "b").write_text("")
    (tmp_path / "a").write_text("")
    done = run_host(["/bin/sh", "-c", "ls; echo x >&2; exit 4"], cwd=str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (4, b"a\nb\n", b"x\n")
    env = run_host(["/usr/bin/env"], cwd="/", env={"LANG": "C", "A": "b"})
    assert (env.returncode, env.stdout) == (0, b"LANG=C\nA=b\n")
