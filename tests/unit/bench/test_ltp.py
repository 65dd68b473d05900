"""bench/ltp: the LTP conformance runner's own logic (issue 32) — the cause a failed run is
grouped under, the runtest list, where the tarball is looked for, the exclusions (each with its
reason) and the report's figure. The builds and runs themselves are the runner's job."""
from pathlib import Path

from bench.ltp.build import TARBALL_NAME, default_tarball
from bench.ltp.causes import cause, verdict
from bench.ltp.ltp import excluded, report
from bench.ltp.runner import read_runtest


def test_causes_follow_ltp_exit_bits_and_the_sandbox_s_own_ends():
    assert cause(None, b"") == "timeout"
    assert cause(1, b"Traceback (most recent call last):\n") == "traceback"
    assert cause(139, b"") == "signal SIGSEGV"
    assert cause(2, b"trapline: unimplemented syscall msync (nr 26) returns -ENOSYS") == "ENOSYS msync"
    assert cause(2 | 1, b"") == "TBROK"          # broken wins over failed: set-up did not finish
    assert cause(1, b"") == "TFAIL"
    assert cause(32, b"") == "TCONF"
    assert cause(4, b"") == "TWARN"
    assert cause(64, b"") == "exit 64"


def test_exit_0_with_an_empty_summary_is_no_result():
    """Without shared memory the child's TBROK never reached the parent, which exited 0 with a
    summary of zeros: that counted as a pass (chroot04 'passed' while seteuid was ENOSYS)."""
    empty = b"chroot04.c:35: TBROK: seteuid(65534) failed\n\nSummary:\npassed   0\nfailed   0\n" \
            b"broken   0\nskipped  0\nwarnings 0\n"
    assert verdict(0, empty) == "no results"
    assert verdict(0, empty.replace(b"passed   0", b"passed   1")) == "pass"
    assert verdict(0, b"old API test without a summary\n") == "pass"
    assert verdict(2, empty) == "TBROK"


def test_runtest_lines_give_name_and_command(tmp_path: Path):
    runtest = tmp_path / "syscalls"
    runtest.write_text("#DESCRIPTION:x\n\nfork04 fork04\nmmap10_1 mmap10 -a\nlonely\n")
    assert read_runtest(runtest) == [("fork04", ["fork04"]), ("mmap10_1", ["mmap10", "-a"])]


def test_the_tarball_is_looked_for_beside_the_root_or_a_parent(tmp_path: Path):
    repo = tmp_path / "work" / "wt" / "branch"
    repo.mkdir(parents=True)
    tarball = tmp_path / "work" / "shared" / "ltp" / TARBALL_NAME
    assert default_tarball(repo) == repo.parent / "shared" / "ltp" / TARBALL_NAME   # none yet
    tarball.parent.mkdir(parents=True)
    tarball.write_bytes(b"")
    assert default_tarball(repo) == tarball


def test_every_exclusion_has_a_reason():
    reasons = excluded()
    assert "stime01" in reasons and "ptrace01" in reasons
    assert all(isinstance(r, str) and len(r) > 10 for r in reasons.values())


def test_report_gives_the_figure_and_causes_largest_first():
    summary = {"arch": "i386", "not_built": [], "excluded": ["stime01"], "native_failures": ["x"],
               "results": {"a": {"result": "pass"}, "b": {"result": "TBROK"},
                           "c": {"result": "TBROK"}, "d": {"result": "timeout"}}}
    lines = report(summary).splitlines()
    assert lines[0] == ("i386: 1 of 4 natively-passing tests pass under trapline "
                        "(1 fail natively, 1 excluded, 0 not built)")
    assert lines[1].split() == ["2", "TBROK:", "b", "c"]
    assert lines[2].split() == ["1", "timeout:", "d"]


def test_a_run_at_its_time_limit_is_killed_with_every_process_of_its_session(tmp_path: Path):
    """LTP puts each test in a process group of its own: the group the runner made is not
    enough, the whole session goes (a native fork13 outlived its time limit before)."""
    import os
    import time
    from bench.ltp.runner import _run_bounded
    marker = tmp_path / "pid"
    # `set -m`: bash puts its background job in a process group of its own, as LTP's
    # library does; no Python start-up in the child, so the marker is there at once even on a
    # loaded host (a Python child missed the 5 s limit under load).
    script = f"set -m; sleep 300 & echo $! > {marker}; echo $(ps -o pgid= -p $!) >> {marker}; wait"
    outcome = _run_bounded(["bash", "-c", script], str(tmp_path), dict(os.environ), 5)
    assert outcome.returncode is None
    pid, group = map(int, marker.read_text().split())
    assert group == pid != os.getpgid(0)          # the sleep had a group of its own
    # SIGKILL is delivered asynchronously: the killed process may still be on its way out
    # (state R) for a moment after the runner returns; it must be gone or dead shortly after.
    state = Path(f"/proc/{pid}/stat")
    for _ in range(100):
        try:
            if state.read_text().split(") ")[1][0] in "ZX":
                break
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"process {pid} outlived its time limit: {state.read_text()}")


def test_device_tests_are_found_by_their_tst_test_flags(tmp_path: Path):
    """A test whose tst_test sets a device flag is listed (its _64 variant too, built from
    the same source); one that sets it to 0, or mentions it elsewhere, is not."""
    from bench.ltp.device_tests import device_tests
    folder = tmp_path / "testcases" / "kernel" / "syscalls" / "x"
    folder.mkdir(parents=True)
    (folder / "mnt01.c").write_text("static struct tst_test test = {\n\t.mount_device = 1,\n};\n")
    (folder / "plain01.c").write_text("static struct tst_test test = {\n\t.needs_root = 1,\n"
                                      "\t.needs_device = 0,\n};\n/* .all_filesystems = 1 */\n")
    (folder / "loopy01.c").write_text('static struct tst_test test = {\n\t.needs_kconfigs = '
                                      '(const char *[]) {"CONFIG_BLK_DEV_LOOP", NULL},\n};\n')
    (tmp_path / "runtest").mkdir()
    (tmp_path / "runtest" / "syscalls").write_text("mnt01 mnt01\nmnt01_64 mnt01_64\nplain01 plain01\n"
                                                   "loopy01 loopy01\n")
    found = device_tests(tmp_path)
    assert sorted(found) == ["loopy01", "mnt01", "mnt01_64"]
    assert ".mount_device" in found["mnt01"] and "loop block driver" in found["loopy01"]


def test_old_api_tests_that_acquire_a_device_themselves_are_found(tmp_path: Path):
    """A test of the old API sets no tst_test flag: it calls tst_acquire_device() (LTP's
    rename11, which natively left loop mounts behind when it was run as not needing one) or a
    sibling; a call only named in a comment does not count."""
    from bench.ltp.device_tests import device_tests
    folder = tmp_path / "testcases" / "kernel" / "syscalls" / "x"
    folder.mkdir(parents=True)
    (folder / "ren01.c").write_text("static void setup(void)\n{\n\tdevice = tst_acquire_device"
                                    "(cleanup);\n}\n")
    (folder / "lo01.c").write_text("\tdev = tst_acquire_loop_device (size, \"f\");\n")
    (folder / "said01.c").write_text("/* unlike tst_acquire_device(cleanup), this\n needs none */\n"
                                     "// nor tst_acquire_device__(0)\nint main(void) { return 0; }\n")
    (tmp_path / "runtest").mkdir()
    (tmp_path / "runtest" / "syscalls").write_text("ren01 ren01\nlo01 lo01\nsaid01 said01\n")
    found = device_tests(tmp_path)
    assert sorted(found) == ["lo01", "ren01"]
    assert all("tst_acquire_device" in reason for reason in found.values())


def test_the_block_device_exclusions_are_the_generator_s():
    """excluded.toml's [block_device] group is what device_tests.py printed (each with its
    reason), not a hand-edited list."""
    names = excluded()
    device = {n: r for n, r in names.items() if r.startswith("needs a block device")}
    assert len(device) > 100 and "utime02" in device and "fallocate02" not in device
    assert {"rename11", "renameat01", "linkat02", "mknodat02", "umount2_01"} <= set(device)
