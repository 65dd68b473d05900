"""Permission checks follow the caller's credentials (fs/permission.py, generic_permission):
after root gives up its uid, a guest gets EACCES for what its mode bits refuse, EPERM for
ownership it lacks and for a sticky directory's other names; new inodes are the caller's;
access(2) checks the real uid. Both ABIs. Before, every check passed as for root (LTP
access01: access(file, W_OK) as nobody succeeded)."""
import struct

from kernel_model import errno as E

from ..call_script import run_script

O_RDONLY, O_WRONLY, O_CREAT = 0, 1, 0o100
R_OK, W_OK = 4, 2
STATX_UID = 20                          # struct statx: stx_uid after mask, blksize, attributes, nlink
PATHS = {"dir": b"/tmp/dir", "dir/file": b"/tmp/dir/file", "dir/sub": b"/tmp/dir/sub",
         "sticky": b"/tmp/sticky", "sticky/root": b"/tmp/sticky/root",
         "sticky/mine": b"/tmp/sticky/mine", "closed": b"/tmp/closed",
         "closed/x": b"/tmp/closed/x"}


def layout():
    """The paths as one data block for BUF, and each one's "BUF+n" argument."""
    data, where = b"", {}
    for name, path in PATHS.items():
        where[name] = f"BUF+{len(data)}"
        data += path + b"\0"
    return data, where


def test_an_unprivileged_caller_meets_the_mode_bits(arch):
    data, p = layout()
    at_fdcwd = (1 << (32 if arch == "i386" else 64)) - 100
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    chown = "chown32" if arch == "i386" else "chown"
    results, buf, _ = run_script(arch, [
        ("umask", 0),
        ("chmod", "/", 0o755),                  # the test's rootfs is a private 0700 folder
        ("mkdir", p["dir"], 0o755),
        ("open", p["dir/file"], O_CREAT | O_WRONLY, 0o600),        # 3
        ("mkdir", p["sticky"], 0o1777),
        ("open", p["sticky/root"], O_CREAT | O_WRONLY, 0o666),     # 4
        ("mkdir", p["closed"], 0o700),
        (setresuid, 1000, 1000, 1000),
        ("open", p["dir/file"], O_RDONLY),                         # 0600, root's
        ("open", "/f", O_WRONLY),                                  # 0644, root's
        ("open", "/f", O_RDONLY),                                  # 5
        ("mkdir", p["dir/sub"], 0o755),                            # 0755 directory, root's
        ("unlink", p["sticky/root"]),                              # sticky, not the owner
        ("open", p["sticky/mine"], O_CREAT | O_WRONLY, 0o644),     # 6
        ("statx", at_fdcwd, p["sticky/mine"], 0, 0xFFF, "BUF+1024"),
        ("access", "/f", W_OK),
        ("access", "/f", R_OK),
        ("chmod", "/f", 0o777),                                    # not the owner
        (chown, p["sticky/mine"], 0, 0xFFFFFFFF),                  # no CAP_CHOWN
        (chown, p["sticky/mine"], 0xFFFFFFFF, 0),                  # its own group: allowed
        ("chmod", p["sticky/mine"], 0o600),                        # its own file
        ("unlink", p["sticky/mine"]),
        ("open", p["closed/x"], O_RDONLY),                         # no search permission
    ], data=data)
    assert results == [0o22, 0, 0, 3, 0, 4, 0, 0, -E.EACCES, -E.EACCES, 5, -E.EACCES, -E.EPERM, 6, 0,
                       -E.EACCES, 0, -E.EPERM, -E.EPERM, 0, 0, 0, -E.EACCES]
    assert struct.unpack_from("<II", buf, 1024 + STATX_UID) == (1000, 0)


def test_access_checks_the_real_uid(arch):
    """access(2) answers for the real uid (access_override_creds): with the effective uid
    given up but the real one still 0, root's answer; the reverse, the real uid's."""
    data, p = layout()
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    results, _, _ = run_script(arch, [
        ("umask", 0),
        ("chmod", "/", 0o755),
        ("open", p["dir"], O_CREAT | O_WRONLY, 0o600),             # a root file, 0600
        (setresuid, 0, 1000, 0),                                   # effective 1000, real 0
        ("open", p["dir"], O_RDONLY),
        ("access", p["dir"], R_OK),
        (setresuid, 1000, 0, 0),                                   # effective 0, real 1000
        ("open", p["dir"], O_RDONLY),                              # 4
        ("access", p["dir"], R_OK),
    ], data=data)
    assert results == [0o22, 0, 3, 0, -E.EACCES, 0, 0, 4, -E.EACCES]
