/* mpi_exchange.c - the barrier skew and per-rank times of MPI_Allgather
 * on 2 ranks, the reference of bench/ucx_exchange.c */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

/*
 *   mpirun -np 2 ... bench/mpi-exchange [REPS [WARM [SIZE [LABEL]]]]
 *
 * Per rep: MPI_Barrier; t0; MPI_Allgather of SIZE bytes; t1, with
 * CLOCK_MONOTONIC (one clock on one machine).  Rank 0 prints the same
 * columns as ucx-exchange: label,size,reps, then min,median,max of the
 * max over ranks of t1 - t0, rank 0's, rank 1's, the skew |t0[1] - t0[0]|
 * (what the barrier leaves), and two columns not measured here (-).
 */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

static void col(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    printf(",%.2f,%.2f,%.2f", v[0], v[n / 2], v[n - 1]);
}

int main(int argc, char **argv)
{
    unsigned reps     = (argc > 1) ? (unsigned)atoi(argv[1]) : 20000;
    unsigned warm     = (argc > 2) ? (unsigned)atoi(argv[2]) : 1000;
    int size          = (argc > 3) ? atoi(argv[3]) : 8;
    const char *label = (argc > 4) ? argv[4] : "mpi";
    unsigned total    = warm + reps;
    double *t         = malloc(2 * total * sizeof(double)); /* t0s, t1s */
    double *all       = malloc(4 * total * sizeof(double));
    double *v         = malloc(reps * sizeof(double));
    char *sbuf;
    char *rbuf;
    int me;
    int n;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if ((n != 2) || (t == NULL) || (all == NULL) || (v == NULL) || (size < 1)) {
        fprintf(stderr, "mpi-exchange: 2 ranks, SIZE >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    sbuf = malloc((size_t)size);
    rbuf = malloc(2 * (size_t)size);
    memset(sbuf, me + 1, (size_t)size);
    for (unsigned i = 0; i < total; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t[i] = now();
        MPI_Allgather(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE,
                      MPI_COMM_WORLD);
        t[total + i] = now();
        if (rbuf[size * (1 - me)] != 2 - me) {
            fprintf(stderr, "mpi-exchange: bad data\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(t, (int)(2 * total), MPI_DOUBLE, all, (int)(2 * total),
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        /* rank r's t0 of rep i: all[r * 2 * total + i], t1: + total */
        double *t0[2] = {all, all + 2 * total};
        double *t1[2] = {all + total, all + 3 * total};

        printf("%s,%d,%u", label, size, reps);
        for (unsigned r = 0; r < reps; r++) {
            double a = t1[0][warm + r] - t0[0][warm + r];
            double b = t1[1][warm + r] - t0[1][warm + r];

            v[r] = (a > b) ? a : b;
        }
        col(v, reps);
        for (int p = 0; p < 2; p++) {
            for (unsigned r = 0; r < reps; r++) {
                v[r] = t1[p][warm + r] - t0[p][warm + r];
            }
            col(v, reps);
        }
        for (unsigned r = 0; r < reps; r++) {
            v[r] = t0[1][warm + r] - t0[0][warm + r];
            v[r] = (v[r] < 0) ? -v[r] : v[r];
        }
        col(v, reps);
        printf(",-,-,-,-,-,-\n");
    }
    MPI_Finalize();
    return 0;
}
