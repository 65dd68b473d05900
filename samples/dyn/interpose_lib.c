/* libtrapline_interpose.so: a function and a variable that the program using the library
 * defines too.  Built -fPIC with semantic interposition (ELF's default rules), so the
 * library's own call to answer_name() goes through its PLT and its use of lib_counter
 * through its GOT: ld.so binds both to the first definition in the global search order,
 * the program's (System V gABI, symbol resolution; the psABI's copy relocations). */

const char *answer_name(void)
{
    return "the library";
}

const char *who_answers(void)
{
    return answer_name();
}

int lib_counter = 1;

int *counter_seen_by_library(void)
{
    return &lib_counter;
}
