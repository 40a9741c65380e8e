# ompi_env.sh - sourced by the tests that run Debian's Open MPI programs.
#
# Open MPI 4.1 leaks at exit from components it has already dlclosed, so
# in the sanitizer build LeakSanitizer reports frames it cannot name and no
# suppression by library can match them.  Leak checking stays on for every
# process that runs only our code (the unit tests and the PMIx clients);
# processes running Open MPI keep AddressSanitizer and UBSan, without leak
# checking.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
