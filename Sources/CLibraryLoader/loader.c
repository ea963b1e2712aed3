// Loads libasound, librubberband and libspeexdsp at their first use and fills the tables
// Swift calls them through (see CLibraryLoader.h for why they are not linked).
#include "CLibraryLoader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

const char *const earshot_alsa_soname = "libasound.so.2";
const char *const earshot_rubberband_soname = "librubberband.so.2";
const char *const earshot_speexdsp_soname = "libspeexdsp.so.1";

static void *open_library(const char *soname, char *error, size_t size) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(error, size, "%s cannot be loaded: %s", soname, reason ? reason : "unknown reason");
    }
    return handle;
}

#define RESOLVE(name) \
    if (!(table->name = (__typeof__(table->name))dlsym(handle, #name))) { \
        snprintf(error, size, "%s has no function %s", soname, #name); \
        return 0; \
    }

int earshot_alsa_load_from(const char *soname, struct earshot_alsa *table, char *error, size_t size) {
    void *handle = open_library(soname, error, size);
    if (!handle) return 0;
    EARSHOT_ALSA_FUNCTIONS(RESOLVE)
    return 1;
}

int earshot_rubberband_load_from(const char *soname, struct earshot_rubberband *table, char *error, size_t size) {
    void *handle = open_library(soname, error, size);
    if (!handle) return 0;
    EARSHOT_RUBBERBAND_FUNCTIONS(RESOLVE)
    return 1;
}

int earshot_speexdsp_load_from(const char *soname, struct earshot_speexdsp *table, char *error, size_t size) {
    void *handle = open_library(soname, error, size);
    if (!handle) return 0;
    EARSHOT_SPEEXDSP_FUNCTIONS(RESOLVE)
    return 1;
}
#undef RESOLVE

// One loaded-once table per library: its table, whether it loaded, and why not.
#define ONCE(library) \
    static struct earshot_##library library##_table; \
    static char library##_failure[512]; \
    static int library##_loaded; \
    static pthread_once_t library##_once = PTHREAD_ONCE_INIT; \
    static void library##_load(void) { \
        library##_loaded = earshot_##library##_load_from(earshot_##library##_soname, &library##_table, \
                                                         library##_failure, sizeof library##_failure); \
    } \
    const struct earshot_##library *earshot_##library##_load(const char **error) { \
        pthread_once(&library##_once, library##_load); \
        if (library##_loaded) return &library##_table; \
        if (error) *error = library##_failure; \
        return NULL; \
    }
ONCE(alsa)
ONCE(rubberband)
ONCE(speexdsp)
