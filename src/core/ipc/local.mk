# src/core/ipc/local.mk - build rules for src/core/ipc
librdp_la_SOURCES += src/core/ipc/ipc.c
noinst_HEADERS    += src/core/ipc/ipc.h
librdp_la_SOURCES += src/core/ipc/bcast.c
noinst_HEADERS    += src/core/ipc/bcast.h
