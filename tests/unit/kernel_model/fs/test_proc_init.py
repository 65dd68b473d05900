"""/proc/1, the sandbox's init (issue 32: LTP getpgid01 reads /proc/1/stat and compares its
group with getpgid(1); both were ENOENT/ESRCH, the model having no process 1). Init shows as a
sleeping process with no parent, leading its own group and session, in /proc's listing too
(tst_get_free_pids counts the threads of every /proc/PID); getpgid(1) and getsid(1) agree."""
from kernel_model import errno as E

from ..call_script import run_script

O_RDONLY, O_DIRECTORY = 0, 0o200000


def test_init_shows_in_proc_and_leads_its_group(arch):
    data = b"/proc/1/stat\0".ljust(32, b"\0") + b"/proc/1/status\0".ljust(32, b"\0") + b"/proc\0"
    results, buf, _ = run_script(arch, [
        ("open", "BUF", O_RDONLY),                       # 3
        ("read", 3, "BUF+512", 200),
        ("open", "BUF+32", O_RDONLY),                    # 4
        ("read", 4, "BUF+768", 400),
        ("getpgid", 1),
        ("getsid", 1),
        ("getpgid", 4242),
        ("open", "BUF+64", O_RDONLY | O_DIRECTORY),      # 5
        ("getdents64", 5, "BUF+1280", 1024),
    ], data=data)
    assert results[:2] == [3, results[1]] and results[1] > 0
    assert buf[512:512 + results[1]].startswith(b"1 (init) S 0 1 1 0 -1 ")
    status = buf[768:768 + results[3]]
    assert b"Name:\tinit\n" in status and b"\nPid:\t1\n" in status and b"\nPPid:\t0\n" in status
    assert results[4:7] == [1, 1, -E.ESRCH]
    listing = buf[1280:1280 + results[8]]
    assert b"\x041\x00" in listing and b"self\x00" in listing        # d_type DT_DIR, "1"
