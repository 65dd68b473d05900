/*
 * sysv_ipc.c -- System V message queues, semaphores and shared memory.
 *
 * Exercises: msgget (IPC_PRIVATE with IPC_CREAT, a key that names no queue:
 * ENOENT), msgsnd, msgrcv by type, with MSG_NOERROR and with IPC_NOWAIT on
 * an empty queue (ENOMSG) and waiting on it until a 10 ms timer's SIGALRM
 * ends the wait (EINTR: msgrcv is never restarted), msgctl
 * IPC_STAT/IPC_SET/IPC_RMID; semget, semctl
 * SETALL/GETVAL/GETALL/SETVAL/IPC_STAT/IPC_RMID, semop with SEM_UNDO and
 * IPC_NOWAIT (EAGAIN), semtimedop with a timeout it does not need; shmget,
 * shmat read-write and SHM_RDONLY, shmctl IPC_STAT/IPC_RMID, shmdt, and
 * shmat of a removed segment (EINVAL).  musl reaches them on i386 through
 * ipc(2), on x86-64 through the direct calls.  Every line it prints is the
 * same natively (in a new IPC namespace) and under trapline: no ids, times
 * or pids are printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/time.h>
#include <signal.h>
#include <time.h>

#define CHECK(x) do { if ((x) < 0) { printf("FAIL %s: %s\n", #x, strerror(errno)); exit(1); } } while (0)

struct message {
    long mtype;
    char mtext[64];
};

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
};

const char *outcome(long r) { return r < 0 ? strerror(errno) : "ok"; }

void on_alarm(int sig) { (void)sig; }

/* Wait on the empty queue until a one-shot timer's signal, whose handler is
 * installed without SA_RESTART, ends the wait. */
void interrupted_wait(int q, struct message *in) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    CHECK(sigaction(SIGALRM, &sa, NULL));
    struct itimerval once = {{0, 0}, {0, 10000}};
    CHECK(setitimer(ITIMER_REAL, &once, NULL));
    printf("waiting: %s\n", outcome(msgrcv(q, in, sizeof in->mtext, 0, 0)));
}

void queues(void) {
    int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    CHECK(q);
    printf("msgget of an absent key: %s\n", outcome(msgget(0x7a11, 0600)));
    struct message out = {1, "hello, queue"}, in;
    CHECK(msgsnd(q, &out, strlen(out.mtext), 0));
    out.mtype = 2;
    strcpy(out.mtext, "second");
    CHECK(msgsnd(q, &out, strlen(out.mtext), IPC_NOWAIT));
    struct msqid_ds ds;
    CHECK(msgctl(q, IPC_STAT, &ds));
    printf("queue holds %lu messages, %lu bytes\n", (unsigned long)ds.msg_qnum,
           (unsigned long)ds.msg_cbytes);
    memset(&in, 0, sizeof in);
    long got = msgrcv(q, &in, sizeof in.mtext, 2, 0);
    CHECK(got);
    printf("type 2: %.*s\n", (int)got, in.mtext);
    memset(&in, 0, sizeof in);
    got = msgrcv(q, &in, 5, 0, MSG_NOERROR);
    CHECK(got);
    printf("first, cut to 5: %.*s\n", (int)got, in.mtext);
    printf("empty queue: %s\n", outcome(msgrcv(q, &in, sizeof in.mtext, 0, IPC_NOWAIT)));
    interrupted_wait(q, &in);
    ds.msg_qbytes = 8192;
    CHECK(msgctl(q, IPC_SET, &ds));
    CHECK(msgctl(q, IPC_RMID, NULL));
}

void semaphores(void) {
    int s = semget(IPC_PRIVATE, 2, IPC_CREAT | IPC_EXCL | 0640);
    CHECK(s);
    unsigned short values[2] = {1, 0};
    CHECK(semctl(s, 0, SETALL, (union semun){.array = values}));
    printf("semaphore 0: %d\n", semctl(s, 0, GETVAL));
    struct sembuf ops[2] = {{0, -1, SEM_UNDO}, {1, 1, 0}};
    CHECK(semop(s, ops, 2));
    struct sembuf take = {1, -1, IPC_NOWAIT};
    struct timespec timeout = {0, 1000000};
    CHECK(semtimedop(s, &take, 1, &timeout));
    printf("semaphore 1 again: %s\n", outcome(semop(s, &take, 1)));
    CHECK(semctl(s, 0, GETALL, (union semun){.array = values}));
    printf("values: %u %u\n", values[0], values[1]);
    CHECK(semctl(s, 1, SETVAL, (union semun){.val = 5}));
    struct semid_ds ds;
    CHECK(semctl(s, 0, IPC_STAT, (union semun){.buf = &ds}));
    printf("%lu semaphores\n", (unsigned long)ds.sem_nsems);
    CHECK(semctl(s, 0, IPC_RMID));
}

void shared_memory(void) {
    int m = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
    CHECK(m);
    char *writer = shmat(m, NULL, 0);
    CHECK(writer == (void *)-1 ? -1 : 0);
    const char *reader = shmat(m, NULL, SHM_RDONLY);
    CHECK(reader == (void *)-1 ? -1 : 0);
    strcpy(writer, "shared");
    printf("reader sees: %s\n", reader);
    struct shmid_ds ds;
    CHECK(shmctl(m, IPC_STAT, &ds));
    printf("%lu bytes, %lu attached\n", (unsigned long)ds.shm_segsz, (unsigned long)ds.shm_nattch);
    CHECK(shmdt(reader));
    CHECK(shmdt(writer));
    CHECK(shmctl(m, IPC_RMID, NULL));
    printf("attach after removal: %s\n", outcome(shmat(m, NULL, 0) == (void *)-1 ? -1 : 0));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    queues();
    semaphores();
    shared_memory();
    return 0;
}
