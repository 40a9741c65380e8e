# src/core/kvs/local.mk - build rules for src/core/kvs
librdp_la_SOURCES += src/core/kvs/kvs.c
noinst_HEADERS    += src/core/kvs/kvs.h
