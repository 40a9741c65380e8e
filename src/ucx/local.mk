# src/ucx/local.mk - build rules for src/ucx (tl.h over UCP active messages)
librdp_la_SOURCES += src/ucx/ucx_tl.c src/ucx/ucx_wire.c src/ucx/ucx_status.c
noinst_HEADERS    += src/ucx/ucx.h src/ucx/ucx_int.h
