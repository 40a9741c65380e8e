/* board_unload.c - a thread that fenced outlives the library: the way
 * Open MPI 4.1 uses libpmix (a component it dlcloses in MPI_Finalize).
 *
 * usage: board_unload LIBPMIX  (under rdpmix-run, 2 or more ranks)
 * A second thread dlopens the library, runs PMIx_Init, a blocking
 * whole-job fence and PMIx_Finalize, then waits; the main thread
 * dlcloses the library, checks that it is gone, and lets the thread
 * exit.  Prints "rank R unload ok" when the process survives that. */
#include <dlfcn.h>
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef pmix_status_t (*init_fn)(pmix_proc_t *, pmix_info_t *, size_t);
typedef pmix_status_t (*fence_fn)(const pmix_proc_t *, size_t,
                                  const pmix_info_t *, size_t);
typedef pmix_status_t (*fini_fn)(const pmix_info_t *, size_t);

static void *lib;
static pmix_proc_t me;
static int fenced[2], go[2];

static void fail(const char *what)
{
    fprintf(stderr, "board_unload: %s\n", what);
    exit(1);
}

static void *fence_thread(void *arg)
{
    init_fn init   = (init_fn)dlsym(lib, "PMIx_Init");
    fence_fn fence = (fence_fn)dlsym(lib, "PMIx_Fence");
    fini_fn fini   = (fini_fn)dlsym(lib, "PMIx_Finalize");
    char c         = 1;

    (void)arg;
    if (init == NULL || fence == NULL || fini == NULL) {
        fail("a PMIx function is missing");
    }
    if (init(&me, NULL, 0) != PMIX_SUCCESS) {
        fail("PMIx_Init failed");
    }
    /* NULL procs: the whole job, the fence the board answers */
    if (fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) {
        fail("PMIx_Fence failed");
    }
    if (fini(NULL, 0) != PMIX_SUCCESS) {
        fail("PMIx_Finalize failed");
    }
    if (write(fenced[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) {
        fail("pipe");
    }
    return NULL; /* thread exit: after the library is gone */
}

int main(int argc, char **argv)
{
    pthread_t t;
    char c = 1;

    if (argc != 2) {
        fail("usage: board_unload LIBPMIX");
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fail(dlerror());
    }
    if (pipe(fenced) != 0 || pipe(go) != 0
        || pthread_create(&t, NULL, fence_thread, NULL) != 0) {
        fail("pipe or thread");
    }
    if (read(fenced[0], &c, 1) != 1) {
        fail("pipe");
    }
    dlclose(lib);
    if (dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) != NULL) {
        fail("the library stayed loaded after dlclose");
    }
    if (write(go[1], &c, 1) != 1 || pthread_join(t, NULL) != 0) {
        fail("pipe or join");
    }
    printf("rank %u unload ok\n", (unsigned)me.rank);
    return 0;
}
