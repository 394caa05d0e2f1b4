#include "ctss2.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct ctss2_functions functions;

static const char *const libraries[] = {
    "libtss2-esys.so.0", "libtss2-tctildr.so.0", "libtss2-mu.so.0", "libtss2-rc.so.0",
};
static void *handles[sizeof libraries / sizeof libraries[0]];
static char failure[512];
static const char *outcome;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/// The first library that has `name`, or NULL.
static void *find(const char *name) {
    for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++) {
        void *symbol = dlsym(handles[i], name);
        if (symbol) return symbol;
    }
    return NULL;
}

static void load(void) {
    for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++) {
        handles[i] = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            const char *why = dlerror();
            snprintf(failure, sizeof failure, "cannot load %s (%s); install tpm2-tss (Debian: libtss2-esys-3.0.2-0, "
                     "libtss2-tctildr0, libtss2-tcti-device0)", libraries[i], why ? why : "not found");
            outcome = failure;
            return;
        }
    }
#define CTSS2_RESOLVE(name) \
    if (!(functions.name = (__typeof__(name) *)find(#name))) { \
        snprintf(failure, sizeof failure, "tpm2-tss has no %s", #name); \
        outcome = failure; \
        return; \
    }
    CTSS2_FUNCTIONS(CTSS2_RESOLVE)
#undef CTSS2_RESOLVE
    outcome = NULL;
}

const struct ctss2_functions *ctss2_load(const char **failure) {
    pthread_once(&once, load);
    *failure = outcome;
    return outcome ? NULL : &functions;
}
