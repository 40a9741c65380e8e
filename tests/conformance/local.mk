# tests/conformance/local.mk - OpenPMIx 4.2.2's examples and test/simple
# programs built against rdpmix and against OpenPMIx, run under rdpmix-run
# and mpirun (docs/conformance.md). Skipped unless RDPMIX_OPENPMIX_SRC is
# set.
TESTS      += tests/conformance/test_conformance.sh
EXTRA_DIST += tests/conformance/test_conformance.sh \
              tests/conformance/conformance.sh \
              tests/conformance/programs.txt \
              tests/conformance/expected-differences.txt
