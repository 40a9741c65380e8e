# src/ucx/local.mk - build rules for src/ucx (tl.h over UCP active messages)
#
# The transport links UCX and libcrypto; the shared libpmix.so.2 does not
# (clients would pay for loading them: ucx.h).  It is built once as a
# convenience library, which programs that link the core statically
# (rdpmixd, tests, benchmarks) link too and register, and which the
# module rdpmix_ucx.so, loaded by libpmix.so.2 for the engine, wraps.
noinst_LTLIBRARIES     += librdp_ucx.la
librdp_ucx_la_SOURCES   = src/ucx/ucx_tl.c src/ucx/ucx_recv.c \
                          src/ucx/ucx_wire.c src/ucx/ucx_gmac.c \
                          src/ucx/ucx_ghash.c \
                          src/ucx/ucx_status.c
librdp_ucx_la_CPPFLAGS  = $(AM_CPPFLAGS) $(UCX_CFLAGS) $(CRYPTO_CFLAGS)
librdp_ucx_la_LIBADD    = $(UCX_LIBS) $(CRYPTO_LIBS)

rdpmixlib_LTLIBRARIES  += rdpmix_ucx.la
rdpmix_ucx_la_SOURCES   = src/ucx/ucx_module.c
# the settings table is self-contained (getenv and the forwarded log)
rdpmix_ucx_la_SOURCES  += src/core/util/config_table.c
rdpmix_ucx_la_LIBADD    = librdp_ucx.la
rdpmix_ucx_la_LDFLAGS   = $(AM_LDFLAGS) -module -avoid-version -no-undefined \
                          -Wl,-Bsymbolic \
                          -export-symbols-regex '^rdpmix_ucx_module_init$$'

# finding the transport (registered, or the module): no UCX needed
librdp_la_SOURCES += src/ucx/ucx_load.c
noinst_HEADERS    += src/ucx/ucx.h src/ucx/ucx_int.h src/ucx/ucx_ghash.h \
                     src/ucx/ucx_gf128.h
