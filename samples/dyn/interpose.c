/* interpose: symbol interposition.  The program defines answer_name(), which
 * libtrapline_interpose.so (found through DT_RUNPATH $ORIGIN) also defines and calls
 * itself: the library's call must reach the program's definition.  It also uses the
 * library's variable lib_counter, through a GOT entry (zig compiles even non-PIE programs
 * of glibc targets position-independent, so R_*_GLOB_DAT rather than a copy relocation):
 * the program and the library must see one object. */
#include <stdio.h>

const char *who_answers(void);
int *counter_seen_by_library(void);
extern int lib_counter;

const char *answer_name(void)
{
    return "the program";
}

int main(void)
{
    printf("who answers: %s\n", who_answers());
    printf("lib_counter starts at %d\n", lib_counter);
    lib_counter = 5;
    printf("library sees %d, same object: %s\n", *counter_seen_by_library(),
           &lib_counter == counter_seen_by_library() ? "yes" : "no");
    return 0;
}
