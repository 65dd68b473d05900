/* dlopen_cos: dlopen("libm.so.6") at run time, look up cos and call it; then ask for a
 * library that does not exist and print dlerror()'s message (ld.so's own wording). */
#include <dlfcn.h>
#include <stdio.h>

typedef double (*unary_fn)(double);

int main(void)
{
    void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    if (libm == NULL) {
        fprintf(stderr, "dlopen libm.so.6: %s\n", dlerror());
        return 1;
    }
    unary_fn cosine = (unary_fn)dlsym(libm, "cos");
    if (cosine == NULL) {
        fprintf(stderr, "dlsym cos: %s\n", dlerror());
        return 1;
    }
    static const double inputs[] = {0.0, 0.5, 1.0, 3.141592653589793, -2.25, 100.0};
    for (unsigned i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        printf("cos(%.17g) = %.17g\n", inputs[i], cosine(inputs[i]));
    if (dlclose(libm) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 1;
    }
    void *absent = dlopen("libtrapline_absent.so.1", RTLD_NOW);
    printf("absent: %s\n", absent == NULL ? dlerror() : "loaded?!");
    return absent == NULL ? 0 : 1;
}
