/* run_tool_launcher.c - PMIx_server_setup_application from a tool that
 * initialised as a launcher (RFC0012's head-node step), from a plain tool,
 * and from a server, for test_tool_launcher.sh to compare.
 *
 *   run_tool_launcher launcher|launcher-required|plain|server=TMPDIR NSPACE
 *                     [envars|nonenvars]
 *
 * launcher-required: PMIX_LAUNCHER given as a required directive.
 *
 * Prints "init STATUS", "setup STATUS" (PMIx_Error_string's names) and
 * then one line per value of the answer: "KEY VALUE" (an environment
 * directive as "KEY NAME=VALUE").
 * Exits 0 whenever it could print what happened. */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct answer {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
} answer_t;

static void print_value(const pmix_info_t *in)
{
    const pmix_value_t *v = &in->value;

    switch (v->type) {
    case PMIX_ENVAR:
        printf("%s %s=%s\n", in->key, v->data.envar.envar,
               v->data.envar.value != NULL ? v->data.envar.value : "");
        break;
    case PMIX_STRING:
        printf("%s %s\n", in->key, v->data.string);
        break;
    default:
        printf("%s (type %d)\n", in->key, (int)v->type);
        break;
    }
}

/* prints the answer here, in the callback, before the library frees it */
static void setup_cb(pmix_status_t status, pmix_info_t info[], size_t ninfo,
                     void *provided_cbdata, pmix_op_cbfunc_t cbfunc,
                     void *cbdata)
{
    answer_t *a = provided_cbdata;

    printf("setup %s\n", PMIx_Error_string(status));
    for (size_t i = 0; status == PMIX_SUCCESS && i < ninfo; i++) {
        print_value(&info[i]);
    }
    fflush(stdout);
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    pthread_mutex_lock(&a->lock);
    a->status = status;
    a->done   = true;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

static pmix_status_t init_as(const char *mode)
{
    pmix_info_t info[2];
    pmix_proc_t me;
    pmix_status_t st;

    if (strncmp(mode, "server=", 7) == 0) {
        PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, mode + 7, PMIX_STRING);
        st = PMIx_server_init(NULL, info, 1);
        PMIX_INFO_DESTRUCT(&info[0]);
        return st;
    }
    PMIX_INFO_LOAD(&info[0], PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_LAUNCHER, NULL, PMIX_BOOL);
    if (strcmp(mode, "launcher-required") == 0) {
        PMIX_INFO_REQUIRED(&info[1]);
    }
    return PMIx_tool_init(&me, info, strcmp(mode, "plain") == 0 ? 1 : 2);
}

static void finalize_as(const char *mode)
{
    if (strncmp(mode, "server=", 7) == 0) {
        (void)PMIx_server_finalize();
    } else {
        (void)PMIx_tool_finalize();
    }
}

int main(int argc, char **argv)
{
    answer_t a = {.lock = PTHREAD_MUTEX_INITIALIZER,
                  .cond = PTHREAD_COND_INITIALIZER};
    pmix_info_t dir;
    size_t ndirs = 0;
    pmix_nspace_t nspace;
    pmix_status_t st;

    if (argc < 3) {
        fprintf(stderr,
                "usage: %s launcher|launcher-required|plain|server=TMPDIR "
                "NSPACE "
                "[envars|nonenvars]\n",
                argv[0]);
        return 2;
    }
    if (argc > 3) {
        PMIX_INFO_LOAD(&dir,
                       strcmp(argv[3], "envars") == 0
                           ? PMIX_SETUP_APP_ENVARS
                           : PMIX_SETUP_APP_NONENVARS,
                       NULL, PMIX_BOOL);
        ndirs = 1;
    }
    st = init_as(argv[1]);
    printf("init %s\n", PMIx_Error_string(st));
    if (st != PMIX_SUCCESS) {
        return 0;
    }
    PMIX_LOAD_NSPACE(nspace, argv[2]);
    st = PMIx_server_setup_application(nspace, ndirs > 0 ? &dir : NULL, ndirs,
                                       setup_cb, &a);
    if (st != PMIX_SUCCESS) {
        printf("setup %s\n", PMIx_Error_string(st));
    } else {
        pthread_mutex_lock(&a.lock);
        while (!a.done) {
            pthread_cond_wait(&a.cond, &a.lock);
        }
        pthread_mutex_unlock(&a.lock);
    }
    finalize_as(argv[1]);
    return 0;
}
