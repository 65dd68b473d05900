/* libtrapline_tls.so: thread-local storage in a shared library (an initialized and a
 * zero-initialized __thread variable: PT_TLS with .tdata and .tbss), reached through the
 * general-dynamic model (__tls_get_addr) because the library is built -fPIC. */

__thread int tls_initial = 42;   /* .tdata: every thread starts with 42 */
__thread long tls_sum;           /* .tbss: every thread starts with 0 */

int tls_initial_value(void)
{
    return tls_initial;
}

long tls_add(long n)
{
    tls_sum += n;
    tls_initial++;
    return tls_sum;
}

void *tls_address(void)
{
    return &tls_sum;
}
