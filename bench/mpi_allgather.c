/* mpi_allgather.c - MPI_Allgather latency, the collective engine's reference */
#include "config.h"

#include "bench/allgather_common.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/*
 * The same measurement as coll-bench (bench/allgather_common.h), with
 * MPI_Barrier and MPI_Allgather of `size` MPI_BYTEs on MPI_COMM_WORLD.
 * Run it under Open MPI with the UCX pml (bench/engine_compare.sh):
 *
 *   mpirun --allow-run-as-root --oversubscribe --bind-to none -np M \
 *       --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
 *       -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo bench/mpi-allgather
 *
 * The timings reach rank 0 with MPI_Gather after each series (untimed).
 */

static void usage(FILE *f)
{
    fprintf(f, "usage: mpi-allgather [options]  (under mpirun)\n"
               "  rank 0 prints CSV: " AG_CSV_HEADER "\n"
               "options:\n"
               "  -a NAME  alg column (default default: Open MPI's choice)\n");
    ag_opts_usage(f, "ompi-ucx");
}

typedef struct opts {
    ag_opts_t ag;
    const char *alg;
} opts_t;

static int parse_opts(int argc, char **argv, opts_t *o)
{
    static const struct option lopts[] = {AG_LONGOPTS};
    int c;

    ag_opts_init(&o->ag, "ompi-ucx");
    o->alg = "default";
    while ((c = getopt_long(argc, argv, AG_OPTSTRING "a:h", lopts, NULL))
           != -1) {
        int done = ag_opts_parse(&o->ag, c, optarg);

        if (done < 0) {
            fprintf(stderr, "mpi-allgather: bad value for -%c: '%s'\n", c,
                    optarg);
            return -1;
        }
        if (done > 0) {
            continue;
        }
        if (c == 'a') {
            o->alg = optarg;
        } else if (c == 'h') {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return -1;
    }
    return ag_opts_finish(&o->ag);
}

/* One size: returns 0, 1 (bad data, reported) or -1 (no memory). */
static int run_series(const opts_t *o, int me, int n, uint32_t sid, size_t size,
                      double *all)
{
    unsigned reps  = ag_reps(size, o->ag.reps, o->ag.reps_large);
    unsigned total = o->ag.warm + reps;
    uint8_t *sbuf  = malloc(size > 0 ? size : 1);
    uint8_t *rbuf  = malloc(size > 0 ? size * (size_t)n : 1);
    double *times  = calloc(reps, sizeof(double));
    int rc         = -1;

    if (sbuf == NULL || rbuf == NULL || times == NULL) {
        fprintf(stderr, "mpi-allgather %d: out of memory\n", me);
        goto out;
    }
    rc = 0;
    for (unsigned it = 0; it < total && rc == 0; it++) {
        int full = ag_full_check(it, total, o->ag.check_all);
        double t0, t1;

        ag_fill(sbuf, size, ag_seed((uint32_t)me, sid, it));
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Allgather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE,
                      MPI_COMM_WORLD);
        t1 = MPI_Wtime();
        for (int p = 0; p < n; p++) {
            size_t bad = ag_check(rbuf + (size_t)p * size, size,
                                  ag_seed((uint32_t)p, sid, it), full);

            if (bad != size) {
                fprintf(stderr,
                        "mpi-allgather %d: block from %d differs at byte %zu "
                        "of %zu (iteration %u)\n",
                        me, p, bad, size, it);
                rc = 1;
                break;
            }
        }
        if (it >= o->ag.warm) {
            times[it - o->ag.warm] = t1 - t0;
        }
    }
    if (rc != 0) {
        goto out;
    }
    MPI_Gather(times, (int)reps, MPI_DOUBLE, all, (int)reps, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    if (me == 0
        && ag_print_row(o->ag.impl, o->alg, (unsigned)n, size, reps, all)
               != 0) {
        rc = -1;
    }
out:
    free(times);
    free(rbuf);
    free(sbuf);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    double *all = NULL;
    unsigned maxreps;
    int me, n;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (parse_opts(argc, argv, &o) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < o.ag.nsizes; i++) {
        if (o.ag.sizes[i] > (size_t)INT32_MAX) {
            if (me == 0) {
                fprintf(stderr, "mpi-allgather: size %zu too large\n",
                        o.ag.sizes[i]);
            }
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    maxreps = o.ag.reps > o.ag.reps_large ? o.ag.reps : o.ag.reps_large;
    if (me == 0) {
        all = malloc((size_t)n * maxreps * sizeof(double));
        if (all == NULL) {
            fprintf(stderr, "mpi-allgather: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (o.ag.header) {
            printf("%s\n", AG_CSV_HEADER);
            fflush(stdout);
        }
    }
    for (size_t i = 0; i < o.ag.nsizes; i++) {
        int rc = run_series(&o, me, n, (uint32_t)i, o.ag.sizes[i], all);

        if (rc != 0) {
            /* bad data exits 2, like coll-bench; the others leave with it */
            MPI_Abort(MPI_COMM_WORLD, rc > 0 ? 2 : 1);
        }
    }
    free(all);
    MPI_Finalize();
    return 0;
}
