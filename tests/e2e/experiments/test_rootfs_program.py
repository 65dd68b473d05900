"""A program in a rootfs (issue 28): the whole tree is shipped by content (files, links,
folders), the guest runs at its own paths whoever runs the point, the manifest lists every
file with its hash and whether the guest loaded it, and verify names a rootfs file that
changed, loaded or not."""
import os
import shutil
import tomllib

import pytest
from click.testing import CliRunner

from trapline.cli import main

from ..samples.test_samples_run import SAMPLES

SPEC = """
name = "rooted"
[program]
rootfs = "root"
path = "/usr/bin/hi"
argv = ["a b"]
[run]
probes = ["syscall:writev", "syscall:write"]
[sweep]
seed = [1, 2]
"""


@pytest.fixture
def rooted(tmp_path):
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "etc").mkdir()
    shutil.copy(SAMPLES / "x86_64" / "args_env", root / "bin" / "args_env")
    os.symlink("/bin/args_env", root / "usr" / "bin" / "hi")
    (root / "etc" / "motd").write_text("not read by the guest\n")
    (tmp_path / "spec.toml").write_text(SPEC)
    return tmp_path


@pytest.mark.e2e
def test_a_program_in_a_rootfs_runs_and_its_tree_is_in_the_manifest(rooted):
    out = rooted / "out"
    result = CliRunner().invoke(main, ["experiment", "run", str(rooted / "spec.toml"), "-o", str(out),
                                       "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = (out / "results.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",ok,,0," in row for row in rows[1:]), rows
    manifest = tomllib.loads((out / "manifest.toml").read_text())
    listed = {i["guest"]: i for i in manifest["inputs"] if i["role"] != "spec"}
    assert sorted(listed) == ["/bin/args_env", "/etc/motd", "/usr/bin/hi"]
    assert listed["/usr/bin/hi"]["role"] == "link" and listed["/usr/bin/hi"]["loaded"]
    assert listed["/etc/motd"]["loaded"] is False
    assert listed["/bin/args_env"]["source"] == f"{rooted / 'root'}/bin/args_env"
    (rooted / "root" / "etc" / "motd").write_text("changed\n")
    verified = CliRunner().invoke(main, ["experiment", "verify", str(out), "-j", "1"])
    assert verified.exit_code == 1
    assert f"differs: input {rooted / 'root'}/etc/motd (guest /etc/motd) changed" in verified.output


OPENING = """
name = "opened"
[program]
rootfs = "root"
path = "/bin/busybox"
argv = ["cat", "/etc/motd"]
expect_stdout = "read by the guest\\n"
[run]
probes = ["syscall:read"]
[metrics]
baseline = true
"""


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "amd64"])
def test_the_manifest_says_which_files_of_the_root_the_guest_opened(debian_bins, tmp_path, arch):
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "etc").mkdir()
    shutil.copy(debian_bins[arch]["busybox"], root / "bin" / "busybox")
    (root / "etc" / "motd").write_text("read by the guest\n")
    (root / "etc" / "issue").write_text("never opened\n")
    (tmp_path / "spec.toml").write_text(OPENING)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "spec.toml"), "-o", str(out),
                                       "-j", "1"])
    assert result.exit_code == 0, result.output
    assert ",true," in (out / "results.csv").read_text().splitlines()[1]      # stdout_matches
    manifest = tomllib.loads((out / "manifest.toml").read_text())
    listed = {i["guest"]: i for i in manifest["inputs"] if i["role"] != "spec"}
    assert (listed["/etc/motd"]["opened"], listed["/etc/issue"]["opened"]) == (True, False)
    assert listed["/etc/motd"]["size"] == len("read by the guest\n")
    assert listed["/bin/busybox"]["loaded"] and not listed["/etc/motd"]["loaded"]
