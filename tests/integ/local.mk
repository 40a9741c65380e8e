# tests/integ/local.mk - build rules for tests/integ

# unmodified Open MPI programs run under rdpmix-run on our libpmix.so.2
if HAVE_MPICC
check_PROGRAMS += tests/integ/mpi_basic
tests_integ_mpi_basic_SOURCES = tests/integ/mpi_basic.c
tests_integ_mpi_basic_CFLAGS  = $(AM_CFLAGS) $(MPI_CFLAGS)
tests_integ_mpi_basic_LDADD   = $(MPI_LIBS)
TESTS += tests/integ/test_ompi.sh tests/integ/test_ompi_nodes.sh
endif
EXTRA_DIST += tests/integ/test_ompi.sh tests/integ/test_ompi_nodes.sh

# the client against a real server: mini_host forks N client_basic ranks
check_PROGRAMS += tests/integ/mini_host tests/integ/client_basic
tests_integ_mini_host_SOURCES    = tests/integ/mini_host.c
tests_integ_mini_host_LDADD      = libpmix.la
tests_integ_client_basic_SOURCES = tests/integ/client_basic.c
tests_integ_client_basic_LDADD   = libpmix.la
TESTS      += tests/integ/test_basic.sh
EXTRA_DIST += tests/integ/test_basic.sh

# rdpmix-run and rdpmixd (src/run): processes, output, exit statuses,
# signals, and a PMIx client checking the job info it is given; --nodes M
# (placement, faults, fences across nodes over the engine)
check_PROGRAMS += tests/integ/run_client
tests_integ_run_client_SOURCES = tests/integ/run_client.c \
                                 tests/integ/run_client_events.c \
                                 tests/integ/run_client.h \
                                 tests/integ/run_client_hostops.c \
                                 tests/integ/run_client_monitor.c \
                                 tests/integ/run_client_connect.c \
                                 tests/integ/run_client_group.c \
                                 tests/integ/run_client_pnet.c \
                                 tests/integ/run_client_query.c \
                                 tests/integ/run_client_board.c \
                                 tests/integ/nsinfo_shape.h
tests_integ_run_client_LDADD   = libpmix.la
tests_integ_run_client_LDFLAGS = -no-install
TESTS += tests/integ/test_run_basic.sh tests/integ/test_run_kill.sh \
         tests/integ/test_run_pmix.sh tests/integ/test_run_nodes.sh \
         tests/integ/test_run_engine.sh tests/integ/test_run_faults.sh \
         tests/integ/test_run_modex.sh tests/integ/test_run_leave.sh \
         tests/integ/test_run_pubsub.sh tests/integ/test_run_events.sh \
         tests/integ/test_run_hostops.sh tests/integ/test_run_monitor.sh \
         tests/integ/test_run_connect.sh tests/integ/test_run_group.sh \
         tests/integ/test_run_pnet.sh tests/integ/test_run_query.sh \
         tests/integ/test_run_fence_board.sh
EXTRA_DIST += tests/integ/test_run_common.sh tests/integ/test_run_basic.sh \
              tests/integ/test_run_kill.sh tests/integ/test_run_pmix.sh \
              tests/integ/test_run_nodes.sh tests/integ/test_run_engine.sh \
              tests/integ/test_run_faults.sh tests/integ/test_run_modex.sh \
              tests/integ/test_run_leave.sh tests/integ/test_run_pubsub.sh \
              tests/integ/test_run_events.sh tests/integ/test_run_hostops.sh \
              tests/integ/test_run_monitor.sh tests/integ/test_run_connect.sh \
              tests/integ/test_run_group.sh tests/integ/test_run_pnet.sh \
              tests/integ/test_run_query.sh \
              tests/integ/test_run_fence_board.sh
# a thread that fenced outlives the library (dlopened, dlclosed: how
# Open MPI 4.1 uses libpmix); test_run_fence_board.sh
check_PROGRAMS += tests/integ/board_unload
tests_integ_board_unload_SOURCES = tests/integ/board_unload.c
tests_integ_board_unload_LDADD   = -ldl -lpthread
# tools (RFC0010): run_tool attaches to rdpmixd / rdpmixd --system
check_PROGRAMS += tests/integ/run_tool
tests_integ_run_tool_SOURCES = tests/integ/run_tool.c tests/integ/run_tool_query.c \
                              tests/integ/query_keys.h tests/integ/nsinfo_shape.h
tests_integ_run_tool_LDADD   = libpmix.la
tests_integ_run_tool_LDFLAGS = -no-install
TESTS      += tests/integ/test_tool.sh tests/integ/test_tool_query.sh
# a launcher tool's PMIx_server_setup_application (RFC0012, simpvni)
check_PROGRAMS += tests/integ/run_tool_launcher
tests_integ_run_tool_launcher_SOURCES = tests/integ/run_tool_launcher.c
tests_integ_run_tool_launcher_LDADD   = libpmix.la
tests_integ_run_tool_launcher_LDFLAGS = -no-install
TESTS      += tests/integ/test_tool_launcher.sh
EXTRA_DIST += tests/integ/test_tool_launcher.sh
EXTRA_DIST += tests/integ/test_tool.sh tests/integ/test_tool_query.sh \
              tests/integ/test_tool_common.sh
# pmix-bench's phases and options (bench/README.md)
TESTS      += tests/integ/test_run_bench.sh
EXTRA_DIST += tests/integ/test_run_bench.sh

# rdpmix-run slow to start daemons, an rdpmixd slow to launch or to exit
# (an LD_PRELOAD shim for test_run_faults.sh)
check_LTLIBRARIES += tests/integ/libslowshim.la
tests_integ_libslowshim_la_SOURCES = tests/integ/slow_shim.c
tests_integ_libslowshim_la_LDFLAGS = -module -avoid-version -shared \
                                     -rpath /nowhere

# a job whose rank 0 attacks its server; the good ranks must still finish
check_PROGRAMS += tests/integ/hostile_client
tests_integ_hostile_client_SOURCES = tests/integ/hostile_client.c
tests_integ_hostile_client_LDADD   = librdp.la
TESTS      += tests/integ/test_hostile.sh
EXTRA_DIST += tests/integ/test_hostile.sh

# Open MPI's own mpirun (ORTE) as the PMIx host, on our libpmix.so.2
if HAVE_MPICC
TESTS += tests/integ/test_mpirun_host.sh
endif
EXTRA_DIST += tests/integ/test_mpirun_host.sh

# engine mode (rdpmix.h): M servers on this machine run fences and direct
# modex between them over UCX
check_PROGRAMS += tests/integ/engine_host tests/integ/engine_client
tests_integ_engine_host_SOURCES   = tests/integ/engine_host.c
tests_integ_engine_host_LDADD     = libpmix.la
tests_integ_engine_client_SOURCES = tests/integ/engine_client.c
tests_integ_engine_client_LDADD   = libpmix.la
TESTS      += tests/integ/test_engine.sh
EXTRA_DIST += tests/integ/test_engine.sh
EXTRA_DIST += tests/integ/ompi_env.sh
noinst_HEADERS += tests/integ/host_util.h
noinst_HEADERS += tests/integ/client_check.h

# a resource manager's host with the habits of real ones (Slurm's): setup
# in the forked child, a v4 client_connected, callbacks under the host's
# lock, contradictory node ids, an int appnum; host-delegated fences and
# direct modex between M server processes
check_PROGRAMS += tests/integ/rm_host tests/integ/rm_client
tests_integ_rm_host_SOURCES   = tests/integ/rm_host.c
tests_integ_rm_host_LDADD     = libpmix.la
tests_integ_rm_client_SOURCES = tests/integ/rm_client.c
tests_integ_rm_client_LDADD   = libpmix.la
TESTS      += tests/integ/test_host_quirks.sh
EXTRA_DIST += tests/integ/test_host_quirks.sh tests/integ/netns_hosts.sh

# rdpmix-run --hosts over an ssh-like agent to hosts in network namespaces
# (netns_hosts.sh); skipped without root
TESTS      += tests/integ/test_run_hosts.sh
EXTRA_DIST += tests/integ/test_run_hosts.sh

# srun --mpi=pmix on a private two-node Slurm cluster (slurm_cluster.sh),
# rdpmix's library preloaded into slurmstepd; skipped without root or Slurm.
# slurm_client, like pmix-bench, has no rpath: it loads whichever
# libpmix.so.2 the environment selects (rdpmix's, or OpenPMIx's when the
# harness is checked with RDPMIX_TEST_SLURM_SERVER=openpmix)
check_PROGRAMS += tests/integ/slurm_client
tests_integ_slurm_client_SOURCES      = tests/integ/slurm_client.c
tests_integ_slurm_client_LDADD        = $(top_builddir)/.libs/libpmix.so
tests_integ_slurm_client_DEPENDENCIES = libpmix.la
tests_integ_slurm_client_LINK         = $(CCLD) $(AM_CFLAGS) $(CFLAGS) \
                                        $(AM_LDFLAGS) $(LDFLAGS) -o $@
TESTS      += tests/integ/test_slurm.sh
EXTRA_DIST += tests/integ/test_slurm.sh tests/integ/slurm_cluster.sh

# rdpmix-run inside a Slurm allocation (salloc) on a private three-node
# cluster: one srun starts the daemons; skipped without root or Slurm
TESTS      += tests/integ/test_run_slurm.sh
EXTRA_DIST += tests/integ/test_run_slurm.sh
# trust follows the fabric: collective payloads without a MAC (docs/design.md)
TESTS      += tests/integ/test_run_trust.sh
EXTRA_DIST += tests/integ/test_run_trust.sh

# rdpmix-info and the RDPMIX_* settings table
TESTS      += tests/integ/test_info.sh
EXTRA_DIST += tests/integ/test_info.sh
