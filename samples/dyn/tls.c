/* tls: threads using the TLS of libtrapline_tls.so (found through DT_RUNPATH $ORIGIN)
 * and of the program itself (_Thread_local, initial-exec/local-exec model).  Each thread
 * checks that it starts from the initialization image, adds its own numbers, and
 * returns its sums; the main thread prints them after joining, in thread order. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdio.h>

int tls_initial_value(void);
long tls_add(long n);
void *tls_address(void);

enum { THREADS = 4, STEPS = 1000 };

_Thread_local int own_tls = 7;

struct result {
    int started_with, ended_with, own;
    long sum;
    void *address;
};

static struct result results[THREADS + 1];
static pthread_barrier_t all_alive;

void run_thread_body(int index)
{
    struct result *r = &results[index];
    r->started_with = tls_initial_value();
    own_tls += index;
    long sum = 0;
    for (long i = 1; i <= STEPS; i++)
        sum = tls_add(i * (index + 1));
    r->sum = sum;
    r->ended_with = tls_initial_value();
    r->own = own_tls;
    r->address = tls_address();
}

void *thread_main(void *arg)
{
    int index = (int)(long)arg;
    pthread_barrier_wait(&all_alive); /* every TLS block exists at once */
    run_thread_body(index);
    pthread_barrier_wait(&all_alive);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    pthread_barrier_init(&all_alive, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&threads[i], NULL, thread_main, (void *)(i + 1)) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    run_thread_body(0);
    int distinct = 1;
    for (int i = 0; i <= THREADS; i++) {
        struct result *r = &results[i];
        printf("thread %d: started with %d, sum %ld, ended with %d, own %d\n",
               i, r->started_with, r->sum, r->ended_with, r->own);
        for (int j = 0; j < i; j++)
            distinct &= results[j].address != r->address;
    }
    printf("TLS blocks distinct: %s\n", distinct ? "yes" : "no");
    return distinct ? 0 : 1;
}
