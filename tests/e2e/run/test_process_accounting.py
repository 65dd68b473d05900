"""BSD process accounting (issue 32, LTP acct02 got TCONF: no acct(2), CONFIG_BSD_PROCESS_ACCT
off): acct(2)'s errors (ENOENT and EISDIR from the open, EACCES for a file that is not regular,
EPERM for nobody) and the acct_v3 records of three children (kernel/acct.c fill_ac): one that
exits without exec (AFORK, its status 3 << 8), one that exec's and exits 7, one SIGKILL'd
(AXSIG, status 9): version 3, no tty, uid, gid, parent, comm, a run time under a second, a
start time within the last minute. Records of the host's other processes (natively) are
skipped by pid; the ASU bit (used root's privileges) is not compared. Compared with the native
run on both arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <signal.h>
#include <sys/acct.h>
#include <sys/wait.h>
#include <time.h>

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1)
        return 7;                          /* the exec'd child */
    char dir[] = "/tmp/acctXXXXXX", name[64];
    mkdtemp(dir);
    snprintf(name, sizeof name, "%s/pacct", dir);
    close(open(name, O_WRONLY | O_CREAT, 0644));
    result("acct missing", acct("/nonexistent/pacct"));
    result("acct directory", acct(dir));
    result("acct /dev/null", acct("/dev/null"));
    pid_t nobody = fork();
    if (nobody == 0) { setuid(65534); result("acct as nobody", acct(name)); _exit(0); }
    waitpid(nobody, NULL, 0);
    result("acct on", acct(name));
    pid_t forked = fork();
    if (forked == 0) _exit(3);
    waitpid(forked, NULL, 0);
    pid_t execd = fork();
    if (execd == 0) { execl("/proc/self/exe", "acct-exec", "x", (char *)NULL); _exit(1); }
    waitpid(execd, NULL, 0);
    pid_t killed = fork();
    if (killed == 0) { pause(); _exit(0); }
    kill(killed, SIGKILL);
    waitpid(killed, NULL, 0);
    result("acct off", acct(NULL));
    int fd = open(name, O_RDONLY);
    struct acct_v3 rec;
    while (read(fd, &rec, sizeof rec) == sizeof rec) {
        const char *who = rec.ac_pid == (unsigned)forked ? "forked" : rec.ac_pid == (unsigned)execd ? "exec'd"
                        : rec.ac_pid == (unsigned)killed ? "killed" : NULL;
        if (!who) continue;
        printf("%s: flag %#x version %d tty %d exitcode %#x uid %u gid %u parent %d comm %.16s"
               " etime<1s %d btime near %d\n", who, rec.ac_flag & ~0x02, rec.ac_version, rec.ac_tty,
               rec.ac_exitcode, rec.ac_uid, rec.ac_gid, rec.ac_ppid == (unsigned)getpid(), rec.ac_comm,
               rec.ac_etime < 100, (long)rec.ac_btime > time(NULL) - 60 && (long)rec.ac_btime <= time(NULL));
    }
    printf("record size %zu\n", sizeof rec);
    unlink(name);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "acct", PROGRAM, arch=request.param)


def test_accounting_records_as_natively(program):
    compare_with_native(program, b"acct /dev/null             -1 EACCES",
                        b"forked: flag 0x1 version 3 tty 0 exitcode 0x300",
                        b"killed: flag 0x11 version 3 tty 0 exitcode 0x9")
