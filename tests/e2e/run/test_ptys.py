"""Pseudo-terminals (issue 32, LTP ioctl01: openpty failed with ENOENT, no /dev/ptmx): a pair
opened through /dev/ptmx is locked (the slave's open and TIOCGPTPEER are EIO) until unlockpt;
/dev/pts/N is the slave (136:N), a terminal for isatty and ttyname, and the master's termios
requests act on it; the line discipline between them (drivers/tty/n_tty.c): the slave's NL
reaches the master as CR NL, the master's input is echoed and assembled into lines (erase, CR
as NL, EOF), FIONREAD counts complete lines, raw mode passes bytes; EAGAIN when empty under
O_NONBLOCK; closing every slave makes the master's read EIO and its poll POLLHUP, closing the
master hangs the slave up and takes its name away. Compared with the native run on both
arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble(shown="r") + r"""
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <termios.h>

static void show(const char *what, const char *buf, long n) {
    printf("%-28s %ld \"", what, n);
    for (long i = 0; i < n; i++)
        if (buf[i] >= 32 && buf[i] < 127) putchar(buf[i]); else printf("\\x%02x", (unsigned char)buf[i]);
    printf("\"\n");
}

static void drain(const char *what, int fd) {
    char buf[256];
    long n = read(fd, buf, sizeof buf);
    if (n < 0) result(what, n); else show(what, buf, n);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    result("posix_openpt", m >= 0 ? 0 : -1);
    unsigned n;
    result("TIOCGPTN", ioctl(m, TIOCGPTN, &n));
    char name[64];
    snprintf(name, sizeof name, "/dev/pts/%u", n);
    printf("ptsname matches %d\n", strcmp(ptsname(m), name) == 0);
    int lock;
    result("TIOCGPTLCK", ioctl(m, TIOCGPTLCK, &lock));
    printf("  locked %d\n", lock);
    result("open locked slave", open(name, O_RDWR | O_NOCTTY));
    result("TIOCGPTPEER locked", ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY));
    result("grantpt", grantpt(m));
    result("unlockpt", unlockpt(m));
    struct stat st;
    stat(name, &st);
    printf("slave chr %d major %u uid %u\n", S_ISCHR(st.st_mode), major(st.st_rdev), st.st_uid);
    int s = open(name, O_RDWR | O_NOCTTY);
    result("open slave", s >= 0 ? 0 : -1);
    printf("isatty master %d slave %d file %d\n", isatty(m), isatty(s), isatty(open("/proc/self/exe", O_RDONLY)));
    printf("ttyname matches %d\n", strcmp(ttyname(s), name) == 0);
    result("TIOCGPTN on slave", ioctl(s, TIOCGPTN, &n));
    struct termios t;
    result("tcgetattr slave", tcgetattr(s, &t));
    printf("  slave iflag %#x oflag %#x cflag %#x lflag %#x vmin %d\n", t.c_iflag, t.c_oflag, t.c_cflag, t.c_lflag, t.c_cc[VMIN]);
    result("tcgetattr master", tcgetattr(m, &t));
    printf("  master iflag %#x oflag %#x cflag %#x lflag %#x\n", t.c_iflag, t.c_oflag, t.c_cflag, t.c_lflag);
    result("TCGETS NULL", ioctl(m, TCGETS, NULL));
    result("TCGETA bad", ioctl(m, TCGETA, (void *)-1));
    result("invalid request", ioctl(m, 0xdead, &t));
    struct winsize ws = { 24, 80, 0, 0 }, got;
    result("TIOCSWINSZ slave", ioctl(s, TIOCSWINSZ, &ws));
    result("TIOCGWINSZ master", ioctl(m, TIOCGWINSZ, &got));
    printf("  rows %d cols %d\n", got.ws_row, got.ws_col);
    /* slave output: ONLCR */
    write(s, "hello\n", 6);
    drain("master reads", m);
    /* canonical input with echo, erase, CR */
    write(m, "abX\x7f" "c\r", 6);
    drain("echo to master", m);
    drain("slave line", s);
    int avail;
    write(m, "one\ntwo\n", 8);
    struct pollfd ready = { s, POLLIN, 0 };
    poll(&ready, 1, 5000);             /* the master's bytes reach the slave's queue by a work item */
    result("FIONREAD slave", ioctl(s, FIONREAD, &avail));
    printf("  available %d\n", avail);
    drain("slave line 1", s);
    drain("slave line 2", s);
    drain("echo of two lines", m);
    struct pollfd p = { s, POLLIN, 0 };
    write(m, "partial", 7);
    result("poll slave partial", poll(&p, 1, 0));
    write(m, "\x04", 1);
    drain("slave after EOF char", s);
    write(m, "\x04", 1);
    drain("slave empty EOF", s);
    drain("echo of partial", m);
    /* raw mode */
    tcgetattr(s, &t);
    cfmakeraw(&t);
    result("tcsetattr raw", tcsetattr(s, TCSANOW, &t));
    tcgetattr(s, &t);
    printf("  raw iflag %#x oflag %#x cflag %#x lflag %#x\n", t.c_iflag, t.c_oflag, t.c_cflag, t.c_lflag);
    write(m, "x\ry", 3);
    drain("slave raw", s);
    write(s, "a\nb", 3);
    drain("master raw", m);
    fcntl(s, F_SETFL, O_NONBLOCK);
    drain("slave nonblocking", s);
    fcntl(m, F_SETFL, O_NONBLOCK);
    drain("master nonblocking", m);
    result("TCFLSH bad", ioctl(m, TCFLSH, 7));
    int peer = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
    result("TIOCGPTPEER", peer >= 0 ? 0 : -1);
    close(peer);
    close(s);
    drain("master after slave closed", m);
    p.fd = m; p.events = POLLIN;
    poll(&p, 1, 0);
    printf("master revents %#x\n", p.revents);
    s = open(name, O_RDWR | O_NOCTTY);
    close(m);
    drain("slave after hangup", s);
    result("write after hangup", write(s, "x", 1));
    result("stat after close", stat(name, &st));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "ptys", PROGRAM, arch=request.param)


def test_ptys_as_natively(program):
    compare_with_native(program, b"open locked slave          -1 EIO",
                        b'echo to master               9 "abX\\x08 \\x08c\\x0d\\x0a"',
                        b"isatty master 1 slave 1 file 0", b"master after slave closed  -1 EIO",
                        b'slave after hangup           0 ""')
