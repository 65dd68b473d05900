/*
 * sockets.c -- AF_UNIX sockets, epoll and eventfd between processes.
 *
 * Exercises: socketpair (stream, datagram, seqpacket), fork, SCM_RIGHTS and
 * SCM_CREDENTIALS through sendmsg/recvmsg, MSG_PEEK/MSG_DONTWAIT/MSG_TRUNC,
 * a server and a client on a filesystem name and on an abstract name (bind,
 * listen, connect, accept4, getsockname, getpeername), epoll_create1/ctl/wait
 * on the listening and the accepted sockets, eventfd, shutdown, and the
 * errnos Linux gives (ENOENT, ECONNREFUSED, EADDRINUSE, EAGAIN, EPIPE with
 * SIGPIPE ignored, ENOTCONN).  Every line it prints is the same natively and
 * under trapline; pids are printed relative to the parent's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(x) do { if ((x) < 0) { printf("FAIL %s: %s\n", #x, strerror(errno)); exit(1); } } while (0)

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

static void pair_and_fork(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    pid_t pid = fork();
    CHECK(pid);
    if (pid == 0) {
        char buf[64];
        close(sv[0]);
        ssize_t n = read(sv[1], buf, sizeof buf);
        for (ssize_t i = 0; i < n; i++) buf[i] ^= 0x20;
        write(sv[1], buf, n);
        _exit(0);
    }
    close(sv[1]);
    write(sv[0], "ping", 4);
    char buf[64] = {0};
    ssize_t n = read(sv[0], buf, sizeof buf);
    int status;
    waitpid(pid, &status, 0);
    n = read(sv[0], buf + 8, 8);
    printf("pair+fork: %s, then EOF %zd, child status %d\n", buf, n, WEXITSTATUS(status));
    close(sv[0]);
}

static void pass_fd(void)
{
    int sv[2], p[2];
    CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
    CHECK(pipe(p));
    write(p[1], "through a passed fd", 19);
    int one = 1;
    CHECK(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof one));
    char control[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {"fd", 2};
    struct msghdr msg = {0};
    msg.msg_iov = &iov; msg.msg_iovlen = 1;
    msg.msg_control = control; msg.msg_controllen = sizeof control;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS; c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &p[0], sizeof(int));
    CHECK(sendmsg(sv[0], &msg, 0));
    close(p[0]);
    char data[8] = {0}, rcontrol[256];
    struct iovec riov = {data, sizeof data};
    struct msghdr rmsg = {0};
    rmsg.msg_iov = &riov; rmsg.msg_iovlen = 1;
    rmsg.msg_control = rcontrol; rmsg.msg_controllen = sizeof rcontrol;
    ssize_t n = recvmsg(sv[1], &rmsg, MSG_CMSG_CLOEXEC);
    int got = -1, creds = 0;
    /* walked by hand: musl's CMSG_NXTHDR compares signed with unsigned (-Werror) */
    for (size_t at = 0; at + sizeof *c <= rmsg.msg_controllen; at += CMSG_ALIGN(c->cmsg_len)) {
        c = (struct cmsghdr *)(rcontrol + at);
        if (c->cmsg_type == SCM_RIGHTS) memcpy(&got, CMSG_DATA(c), sizeof got);
        if (c->cmsg_type == SCM_CREDENTIALS) {
            struct ucred u; memcpy(&u, CMSG_DATA(c), sizeof u);
            creds = u.pid == getpid() && u.uid == getuid();
        }
    }
    char text[32] = {0};
    read(got, text, sizeof text - 1);
    printf("scm_rights: %zd bytes '%s', fd reads '%s', cloexec %d, creds match %d\n", n, data,
           text, (fcntl(got, F_GETFD) & FD_CLOEXEC) != 0, creds);
    close(got); close(p[1]);

    /* datagrams keep their boundaries; MSG_TRUNC gives the real length */
    send(sv[0], "0123456789", 10, 0);
    send(sv[0], "ab", 2, 0);
    char small[4];
    ssize_t peek = recv(sv[1], small, sizeof small, MSG_PEEK | MSG_TRUNC);
    ssize_t first = recv(sv[1], small, sizeof small, 0);
    ssize_t second = recv(sv[1], small, sizeof small, 0);
    ssize_t third = recv(sv[1], small, sizeof small, MSG_DONTWAIT);
    printf("dgram: peek %zd, first %zd, second %zd, empty %s\n", peek, first, second, err(third));
    close(sv[0]); close(sv[1]);
}

static void seqpacket(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
    send(sv[0], "one", 3, 0);
    send(sv[0], "three", 5, 0);
    char buf[16];
    ssize_t a = recv(sv[1], buf, sizeof buf, 0), b = recv(sv[1], buf, sizeof buf, 0);
    close(sv[0]);
    ssize_t eof = recv(sv[1], buf, sizeof buf, 0);
    ssize_t sent = send(sv[1], "x", 1, 0);
    printf("seqpacket: %zd %zd, eof %zd, send to closed %s\n", a, b, eof, err(sent));
    close(sv[1]);
}

static socklen_t fill(struct sockaddr_un *a, const char *path, int abstract)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    strcpy(a->sun_path + abstract, path);
    return offsetof(struct sockaddr_un, sun_path) + abstract + strlen(path) + !abstract;
}

static void server_client(const char *name, int abstract)
{
    struct sockaddr_un addr, got;
    socklen_t len = fill(&addr, name, abstract), glen = sizeof got;
    if (!abstract) unlink(name);
    int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(srv);
    CHECK(bind(srv, (struct sockaddr *)&addr, len));
    int again = socket(AF_UNIX, SOCK_STREAM, 0);
    long inuse = bind(again, (struct sockaddr *)&addr, len);
    printf("%s: second bind %s\n", abstract ? "abstract" : "path", err(inuse));
    close(again);
    CHECK(listen(srv, 4));
    getsockname(srv, (struct sockaddr *)&got, &glen);
    printf("  getsockname length %d, same name %d\n", (int)glen,
           memcmp(&got, &addr, len) == 0);

    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {EPOLLIN, {.u32 = 1}};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, srv, &ev));
    pid_t pid = fork();
    CHECK(pid);
    if (pid == 0) {
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(connect(c, (struct sockaddr *)&addr, len));
        char line[] = "hello from the client";
        write(c, line, sizeof line);
        char reply[64] = {0};
        read(c, reply, sizeof reply);
        _exit(strcmp(reply, "HELLO") == 0 ? 7 : 1);
    }
    struct epoll_event out[4];
    int n = epoll_wait(ep, out, 4, -1);
    printf("  epoll: %d ready, data %u, events %#x\n", n, out[0].data.u32, out[0].events);
    struct sockaddr_un peer;
    socklen_t plen = sizeof peer;
    int conn = accept4(srv, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK);
    CHECK(conn);
    printf("  accepted, peer name length %d\n", (int)plen);
    struct epoll_event cev = {EPOLLIN | EPOLLRDHUP, {.u32 = 2}};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, conn, &cev));
    char buf[64] = {0};
    n = epoll_wait(ep, out, 4, -1);
    ssize_t r = read(conn, buf, sizeof buf);
    printf("  epoll: %d ready, data %u; read %zd '%s'\n", n, out[0].data.u32, r, buf);
    write(conn, "HELLO", 5);
    int status;
    waitpid(pid, &status, 0);
    n = epoll_wait(ep, out, 4, -1);
    printf("  after the client: data %u, hup %d, rdhup %d, read %zd, status %d\n",
           out[0].data.u32, !!(out[0].events & EPOLLHUP), !!(out[0].events & EPOLLRDHUP),
           read(conn, buf, sizeof buf), WEXITSTATUS(status));
    close(conn); close(srv); close(ep);
    int late = socket(AF_UNIX, SOCK_STREAM, 0);
    long refused = connect(late, (struct sockaddr *)&addr, len);
    printf("  connect after close: %s\n", err(refused));
    close(late);
    if (!abstract) unlink(name);
}

static void errors(void)
{
    struct sockaddr_un addr;
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    socklen_t len = fill(&addr, "no-such-socket", 0);
    printf("errors: connect to a missing path %s", err(connect(s, (struct sockaddr *)&addr, len)));
    len = fill(&addr, "nobody-listens", 1);
    printf(", abstract %s", err(connect(s, (struct sockaddr *)&addr, len)));
    printf(", write unconnected %s\n", err(send(s, "x", 1, MSG_NOSIGNAL)));
    close(s);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
    char big[4096] = {0};
    long total = 0, r;
    while ((r = write(sv[0], big, sizeof big)) > 0) total += r;
    printf("  full: %s after some bytes %d\n", err(r), total > 0);
    shutdown(sv[1], SHUT_RD);
    signal(SIGPIPE, SIG_IGN);
    close(sv[1]);
    printf("  write to a closed peer: %s\n", err(write(sv[0], "x", 1)));
    int type; socklen_t tl = sizeof type;
    getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &tl);
    printf("  SO_TYPE %d\n", type);
    close(sv[0]);
}

static void event_fd(void)
{
    int e = eventfd(3, EFD_NONBLOCK);
    unsigned long long v = 4;
    write(e, &v, sizeof v);
    read(e, &v, sizeof v);
    long again = read(e, &v, sizeof v);
    printf("eventfd: read %llu, then %s\n", v, err(again));
    close(e);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pair_and_fork();
    pass_fd();
    seqpacket();
    server_client("server.sock", 0);
    server_client("trapline-abstract", 1);
    errors();
    event_fd();
    return 0;
}
