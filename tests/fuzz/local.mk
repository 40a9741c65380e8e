# tests/fuzz/local.mk - libFuzzer targets (see tests/fuzz/README.md)
#
# Built only when configure defines the ENABLE_FUZZ conditional (clang and
# --enable-fuzz).  The sources under test are compiled into the target
# itself so that they carry the fuzzer's coverage instrumentation.
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_unpack
tests_fuzz_fuzz_unpack_SOURCES = tests/fuzz/fuzz_unpack.c \
                                 src/core/wire/wire.c src/core/kvs/kvs.c \
                                 src/core/util/value.c src/core/util/hash.c \
                                 src/core/util/log.c
tests_fuzz_fuzz_unpack_CFLAGS  = $(AM_CFLAGS) -g -O1 \
                                 -fsanitize=fuzzer,address,undefined \
                                 -fno-sanitize-recover=undefined
tests_fuzz_fuzz_unpack_LDFLAGS = -fsanitize=fuzzer,address,undefined
endif
EXTRA_DIST += tests/fuzz/README.md
