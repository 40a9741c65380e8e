# src/pnet/local.mk - fabric credential modules (RFC0012, DESIGN.md §9)
librdp_la_SOURCES += src/pnet/pnet.c src/pnet/pnet_env.c \
                     src/pnet/pnet_opa.c src/pnet/pnet_simptest.c
noinst_HEADERS    += src/pnet/pnet.h src/pnet/pnet_int.h
