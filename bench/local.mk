# bench/local.mk - build rules for bench: pmix-bench and its scripts

# pmix-bench must load whichever libpmix.so.2 the launcher's environment
# selects (rdpmix's under rdpmix-run, OpenPMIx's under mpirun), so it is
# linked with no rpath/runpath at all.  Linking through libtool against
# libpmix.la would hardcode $(rdpmixlibdir) into the installed binary and
# turn the build-tree program into a wrapper script that forces the
# build's .libs onto LD_LIBRARY_PATH; so the link is done by the compiler
# driver against the built shared object (DT_NEEDED is its SONAME,
# libpmix.so.2).  The program's only dependency is libpmix.la, for the
# build order.
bin_PROGRAMS                 += bench/pmix-bench
bench_pmix_bench_SOURCES      = bench/pmix_bench.c
bench_pmix_bench_LDADD        = $(top_builddir)/.libs/libpmix.so
bench_pmix_bench_DEPENDENCIES = libpmix.la
bench_pmix_bench_LINK         = $(CCLD) $(AM_CFLAGS) $(CFLAGS) \
                                $(AM_LDFLAGS) $(LDFLAGS) -o $@

dist_noinst_SCRIPTS += bench/compare.sh bench/summarize.py
EXTRA_DIST          += bench/README.md bench/RESULTS.md

# ucx_pingpong: one-way latency and bandwidth of the UCX transport (src/ucx)
# between two transports in one process; not installed
noinst_PROGRAMS              += bench/ucx_pingpong
bench_ucx_pingpong_SOURCES    = bench/ucx_pingpong.c
bench_ucx_pingpong_CPPFLAGS   = $(AM_CPPFLAGS) -I$(top_srcdir)
bench_ucx_pingpong_LDADD      = librdp_ucx.la librdp.la

# mac-floor: the authentication floor (payload MAC cost per message and
# side, 8 B-1 MiB) for bench/RESULTS.md's trust targets; not installed
noinst_PROGRAMS              += bench/mac-floor
bench_mac_floor_SOURCES       = bench/mac_floor.c
bench_mac_floor_CPPFLAGS      = $(AM_CPPFLAGS) -I$(top_srcdir)
bench_mac_floor_LDADD         = librdp_ucx.la librdp.la

# coll-bench: allgather latency of the collective engine over UCX, M
# processes started by bench/engine_compare.sh; not installed
noinst_PROGRAMS              += bench/coll-bench
bench_coll_bench_SOURCES      = bench/coll_bench.c
bench_coll_bench_CPPFLAGS     = $(AM_CPPFLAGS) -I$(top_srcdir)
bench_coll_bench_LDADD        = librdp_ucx.la librdp.la
noinst_HEADERS               += bench/allgather_common.h

# mpi-allgather: the same measurement with MPI_Allgather (Open MPI + UCX pml)
if HAVE_MPICC
noinst_PROGRAMS              += bench/mpi-allgather
bench_mpi_allgather_SOURCES   = bench/mpi_allgather.c
bench_mpi_allgather_CPPFLAGS  = $(AM_CPPFLAGS) -I$(top_srcdir)
bench_mpi_allgather_CFLAGS    = $(AM_CFLAGS) $(MPI_CFLAGS)
bench_mpi_allgather_LDADD     = $(MPI_LIBS)

# mpi-hello: MPI_Init + MPI_Finalize, whose wall time launch_compare.sh
# takes under each launcher
noinst_PROGRAMS              += bench/mpi-hello
bench_mpi_hello_SOURCES       = bench/mpi_hello.c
bench_mpi_hello_CFLAGS        = $(AM_CFLAGS) $(MPI_CFLAGS)
bench_mpi_hello_LDADD         = $(MPI_LIBS)

# mpi-exchange: MPI_Allgather on 2 ranks with the barrier's skew, the
# reference of ucx-exchange (below)
noinst_PROGRAMS              += bench/mpi-exchange
bench_mpi_exchange_SOURCES    = bench/mpi_exchange.c
bench_mpi_exchange_CFLAGS     = $(AM_CFLAGS) $(MPI_CFLAGS)
bench_mpi_exchange_LDADD      = $(MPI_LIBS)
endif

dist_noinst_SCRIPTS += bench/engine_compare.sh bench/summarize_coll.py \
                       bench/project.py bench/build_diag.sh
dist_noinst_SCRIPTS += bench/pair_ab.py
# trust_compare.sh: issue 11's trust targets from one run (full and open
# engine vs MPI_Allgather, mac-floor before and after); summarize_trust.py
dist_noinst_SCRIPTS += bench/trust_compare.sh bench/summarize_trust.py
# progress_ab.sh: isolated-mode allgather of a base build, this build and
# this build with RDPMIX_UCX_BUSY_US against MPI, rotating order per round;
# summarize_progress_ab.py makes the table
dist_noinst_SCRIPTS += bench/progress_ab.sh bench/summarize_progress_ab.py
# env_ab.py: the engine allgather under several settings (environment,
# options, another build), paired round by round
dist_noinst_SCRIPTS += bench/env_ab.py

dist_noinst_SCRIPTS += bench/ucx_exchange.sh bench/exchange_matrix.sh \
                       bench/summarize_exchange.py
EXTRA_DIST += bench/COLL.md

# call_timeline: an LD_PRELOAD library that times a process's socket,
# epoll and yield calls (built by hand: see its header), and its summary
EXTRA_DIST          += bench/call_timeline.c
dist_noinst_SCRIPTS += bench/call_timeline.py

# launch_compare.sh: one program (mpi-hello or pmix-bench) under rdpmix-run,
# mpirun, srun --mpi=pmix with OpenPMIx or rdpmix, rdpmix-run in a Slurm
# allocation; summarize_launch.py makes the tables and plots
dist_noinst_SCRIPTS += bench/launch_compare.sh bench/summarize_launch.py \
                       bench/summarize_short.py
dist_noinst_SCRIPTS += bench/pair_launch.py
# launch_ab.py: pmix-bench under rdpmix-run --nodes 2, settings (environment,
# build) alternating launch by launch, ratios paired per round
dist_noinst_SCRIPTS += bench/launch_ab.py

# compare_nodes.sh: pmix-bench on M simulated nodes, rdpmix-run --nodes vs
# mpirun with fake hosts (fake-rsh); summarize_nodes.py makes the tables
dist_noinst_SCRIPTS += bench/compare_nodes.sh bench/fake-rsh \
                       bench/summarize_nodes.py

# ucx-exchange: a 2-process allgather on raw UCP with switches for what
# differs between src/ucx and Open MPI's pml ucx (issue 11's 2-server
# gap); standalone, not part of make check
noinst_PROGRAMS              += bench/ucx-exchange
bench_ucx_exchange_SOURCES    = bench/ucx_exchange.c
bench_ucx_exchange_CPPFLAGS  = $(AM_CPPFLAGS) $(UCX_CFLAGS)
bench_ucx_exchange_LDADD      = $(UCX_LIBS)
