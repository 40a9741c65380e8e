# tests/integ/local.mk - build rules for tests/integ

# unmodified Open MPI programs run under rdpmix-run on our libpmix.so.2
if HAVE_MPICC
check_PROGRAMS += tests/integ/mpi_basic
tests_integ_mpi_basic_SOURCES = tests/integ/mpi_basic.c
tests_integ_mpi_basic_CFLAGS  = $(AM_CFLAGS) $(MPI_CFLAGS)
tests_integ_mpi_basic_LDADD   = $(MPI_LIBS)
TESTS += tests/integ/test_ompi.sh
endif
EXTRA_DIST += tests/integ/test_ompi.sh
