/* mpi_basic.c - an unmodified MPI program: collectives, a ring, and a report
 * of which libpmix.so.2 the process loaded (read from /proc/self/maps). */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(int rank, const char *what)
{
    fprintf(stderr, "rank %d: FAILED %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
}

/* Path of the libpmix.so.2 mapped into this process, or "none". */
static void loaded_libpmix(char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];

    snprintf(out, cap, "none");
    if (f == NULL) {
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = strchr(line, '/');
        if (p != NULL && strstr(p, "libpmix.so") != NULL) {
            p[strcspn(p, "\n")] = '\0';
            snprintf(out, cap, "%s", p);
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    int rank, size, sum, expect, token, *all, namelen;
    char lib[4096], node[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (argc > 1 && size != atoi(argv[1])) {
        fprintf(stderr, "rank %d: MPI size %d, expected %s\n", rank, size,
                argv[1]);
        return fail(rank, "size");
    }

    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect = size * (size - 1) / 2;
    if (sum != expect) {
        return fail(rank, "allreduce");
    }

    all = calloc((size_t)size, sizeof(int));
    token = rank * 10 + 1;
    MPI_Allgather(&token, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) {
        if (all[i] != i * 10 + 1) {
            return fail(rank, "allgather");
        }
    }
    free(all);

    MPI_Barrier(MPI_COMM_WORLD);

    /* ring: rank 0 starts a token that every rank increments */
    if (size > 1) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        if (rank == 0) {
            token = 0;
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (token != size - 1) {
                return fail(rank, "ring");
            }
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        }
    }

    loaded_libpmix(lib, sizeof(lib));
    MPI_Get_processor_name(node, &namelen);
    printf("rank %d of %d ok libpmix=%s node=%s\n", rank, size, lib, node);
    MPI_Finalize();
    return 0;
}
