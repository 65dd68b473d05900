/*
 * forkscript.c -- runs a script of calls, vforks, forks, execs and exits
 * given as argv, so that property tests can generate process trees without
 * a compiler.
 *
 * Usage: forkscript [@LABEL] STEP...
 *
 *   aN bN cN   call probed_a / probed_b / probed_c N times (probed_b calls
 *              probed_c once per call, so bN also makes N calls of probed_c)
 *   v STEP... .   vfork; the child runs the steps up to the matching "." and
 *              ends; the parent waits for it and continues after the "."
 *   f STEP... .   the same with fork
 *   e          execve this program with the rest of the current group (the
 *              steps up to the enclosing "." or the end) and label LABEL+"e"
 *   x          end this process now
 *   k          print "LABEL: code=XXXXXXXX", the FNV-1a hash of the bytes of
 *              the probed functions as this process sees them
 *   p          print "LABEL: pid=N" (not deterministic natively; for tests
 *              that map labels to the sandbox's pids)
 *
 * Every process (every image: an exec'd image is a new one) has a label: the
 * first is "P", its first child "Pv1" or "Pf1", the second "Pv2"..., an
 * exec'd image adds "e".  When an image ends (end of its steps, x, or e) it
 * prints "LABEL: a=A b=B c=C", the calls of each probed function IT made; a
 * parent prints "LABEL: reaped CHILD status S" after each child.  Parents
 * wait for each child before going on, so the output is fixed.  Example:
 *
 *   forkscript a2 v b1 k . a1 f c3 e a1 . k
 *
 * All probed functions live in the section "probed", so `k` hashes exactly
 * [__start_probed, __stop_probed): a patched probe site changes the hash.
 * They are straight-line code: a probe anywhere in one is hit on every call.
 *
 * Nothing here uses stdio (a vfork child would share its buffers): lines are
 * formatted by hand and written with write(2).  Exit status 0; a bad script
 * prints a message to stderr and exits 2.  Run it by a path (argv[0]
 * containing '/'); otherwise `e` execs /proc/self/exe.
 */
#define _GNU_SOURCE /* vfork is not in POSIX.1-2008 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBED __attribute__((section("probed"), noinline))
#define MAX_ARGS 512
#define LABEL_MAX 120

extern char **environ;
extern const unsigned char __start_probed[], __stop_probed[];

/* This image's calls of the probed functions.  volatile: a vfork child
 * writes them in the shared memory and the parent restores its own. */
volatile int a_calls, b_calls, c_calls;

/* This image's label and its number of children so far. */
char label[LABEL_MAX + 1] = "P";
int children;

/* The script: argv from the first step on. */
char **steps;
int step_count;
const char *self;

PROBED int probed_c(int x)
{
    c_calls = c_calls + 1;
    return (x ^ 0x55) + 3;
}

PROBED int probed_a(int x)
{
    a_calls = a_calls + 1;
    return x * 5 + 3;
}

PROBED int probed_b(int x)
{
    b_calls = b_calls + 1;
    return probed_c(x) + 1;
}

/* ---- output without stdio ---------------------------------------------- */

void put(char *line, size_t *len, const char *text)
{
    size_t n = strlen(text);
    if (*len + n < 256) {
        memcpy(line + *len, text, n);
        *len += n;
    }
}

void put_number(char *line, size_t *len, unsigned long value, unsigned base, int width)
{
    char digits[24];
    int n = 0;

    do {
        digits[n++] = "0123456789abcdef"[value % base];
        value /= base;
    } while (value != 0 || n < width);
    char text[24];
    for (int i = 0; i < n; i++)
        text[i] = digits[n - 1 - i];
    text[n] = '\0';
    put(line, len, text);
}

void emit(char *line, size_t len)
{
    line[len++] = '\n';
    if (write(1, line, len) != (ssize_t)len)
        _exit(3);
}

void die(const char *what, const char *step)
{
    char line[256];
    size_t len = 0;

    put(line, &len, "forkscript: ");
    put(line, &len, what);
    put(line, &len, step);
    line[len++] = '\n';
    if (write(2, line, len) < 0)
        _exit(2);
    _exit(2);
}

/* ---- the steps --------------------------------------------------------- */

unsigned fnv1a(const unsigned char *start, const unsigned char *end)
{
    unsigned hash = 2166136261u;

    for (const unsigned char *p = start; p < end; p++)
        hash = (hash ^ *p) * 16777619u;
    return hash;
}

void print_code_hash(void)
{
    char line[256];
    size_t len = 0;

    put(line, &len, label);
    put(line, &len, ": code=");
    put_number(line, &len, fnv1a(__start_probed, __stop_probed), 16, 8);
    emit(line, len);
}

void print_pid(void)
{
    char line[256];
    size_t len = 0;

    put(line, &len, label);
    put(line, &len, ": pid=");
    put_number(line, &len, (unsigned long)getpid(), 10, 1);
    emit(line, len);
}

/* "LABEL: a=A b=B c=C": the calls this image made. */
void print_counts(void)
{
    char line[256];
    size_t len = 0;

    put(line, &len, label);
    put(line, &len, ": a=");
    put_number(line, &len, (unsigned long)a_calls, 10, 1);
    put(line, &len, " b=");
    put_number(line, &len, (unsigned long)b_calls, 10, 1);
    put(line, &len, " c=");
    put_number(line, &len, (unsigned long)c_calls, 10, 1);
    emit(line, len);
}

/* End this image: every process ends here or in exec_rest.  _exit, because
 * a vfork child must not run the parent's atexit handlers. */
__attribute__((noreturn)) void finish(void)
{
    print_counts();
    _exit(0);
}

int repeat_count(const char *step)
{
    int n = 0;

    if (step[1] == '\0')
        die("a call step needs a count: ", step);
    for (const char *p = step + 1; *p; p++) {
        if (*p < '0' || *p > '9' || n > 999)
            die("bad call count: ", step);
        n = n * 10 + (*p - '0');
    }
    return n;
}

void call_step(const char *step)
{
    int n = repeat_count(step);

    for (int i = 0; i < n; i++) {
        if (step[0] == 'a')
            probed_a(i);
        else if (step[0] == 'b')
            probed_b(i);
        else
            probed_c(i);
    }
}

/* Index of the "." closing the group that starts at `first`, or step_count. */
int group_end(int first)
{
    int depth = 0;

    for (int i = first; i < step_count; i++) {
        if (strcmp(steps[i], "v") == 0 || strcmp(steps[i], "f") == 0)
            depth++;
        else if (strcmp(steps[i], ".") == 0 && depth-- == 0)
            return i;
    }
    return step_count;
}

/* Replace this image by a new one running steps [first, end). */
void exec_rest(int first, int end)
{
    char new_label[LABEL_MAX + 2];
    char *argv[MAX_ARGS];
    int argc = 0;

    if (strlen(label) + 2 > LABEL_MAX)
        die("labels nest too deep at ", "e");
    new_label[0] = '@';
    strcpy(new_label + 1, label);
    strcat(new_label, "e");
    if (end - first + 3 > MAX_ARGS)
        die("script too long at ", "e");
    argv[argc++] = (char *)self;
    argv[argc++] = new_label;
    for (int i = first; i < end; i++)
        argv[argc++] = steps[i];
    argv[argc] = NULL;
    print_counts();
    execve(self, argv, environ);
    die("execve failed: ", self);
}

void run_steps(int first, int end);

/* The child side of v and f: a fresh label and counts, run the group, end. */
__attribute__((noreturn)) void child_main(char kind, int number, int first, int end)
{
    char suffix[16];
    size_t len = 0;

    suffix[len++] = kind;
    put_number(suffix, &len, (unsigned long)number, 10, 1);
    suffix[len] = '\0';
    if (strlen(label) + len > LABEL_MAX)
        die("labels nest too deep at ", suffix);
    strcat(label, suffix);
    children = 0;
    a_calls = b_calls = c_calls = 0;
    run_steps(first, end);
    finish();
}

void print_reaped(const char *child_label, int status)
{
    char line[256];
    size_t len = 0;

    put(line, &len, label);
    put(line, &len, ": reaped ");
    put(line, &len, child_label);
    put(line, &len, " status ");
    put_number(line, &len,
               (unsigned long)(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)),
               10, 1);
    emit(line, len);
}

/* v or f: the child runs steps [first, end); the parent waits for it.  A
 * vfork child borrows this frame and the globals, so the parent keeps its
 * state in locals and puts it back once the child is gone. */
void spawn(char kind, int first, int end)
{
    char saved_label[LABEL_MAX + 1];
    int saved_a = a_calls, saved_b = b_calls, saved_c = c_calls;
    int number = children + 1;

    strcpy(saved_label, label);
    pid_t pid = kind == 'v' ? vfork() : fork();
    if (pid < 0)
        die("fork failed at ", kind == 'v' ? "v" : "f");
    if (pid == 0)
        child_main(kind, number, first, end);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid failed at ", kind == 'v' ? "v" : "f");
    strcpy(label, saved_label);
    a_calls = saved_a, b_calls = saved_b, c_calls = saved_c;
    children = number;

    char child_label[LABEL_MAX + 16];
    size_t len = 0;
    put(child_label, &len, label);
    child_label[len++] = kind;
    put_number(child_label, &len, (unsigned long)number, 10, 1);
    child_label[len] = '\0';
    print_reaped(child_label, status);
}

void run_steps(int first, int end)
{
    for (int i = first; i < end; i++) {
        const char *step = steps[i];
        if (step[0] == 'a' || step[0] == 'b' || step[0] == 'c') {
            call_step(step);
        } else if (strcmp(step, "v") == 0 || strcmp(step, "f") == 0) {
            int close = group_end(i + 1);
            if (close >= end)
                die("no \".\" closes the group at step ", step);
            spawn(step[0], i + 1, close);
            i = close;
        } else if (strcmp(step, "e") == 0) {
            exec_rest(i + 1, end);
        } else if (strcmp(step, "x") == 0) {
            finish();
        } else if (strcmp(step, "k") == 0) {
            print_code_hash();
        } else if (strcmp(step, "p") == 0) {
            print_pid();
        } else {
            die("unknown step ", step);
        }
    }
}

int main(int argc, char **argv)
{
    int first = 1;

    self = strchr(argv[0], '/') ? argv[0] : "/proc/self/exe";
    if (argc > 1 && argv[1][0] == '@') {
        if (strlen(argv[1] + 1) > LABEL_MAX)
            die("label too long: ", argv[1]);
        strcpy(label, argv[1] + 1);
        first = 2;
    }
    steps = argv + first;
    step_count = argc - first;
    if (group_end(0) != step_count)
        die("a \".\" closes no group: ", "");
    run_steps(0, step_count);
    finish();
    return 0;
}
