# src/core/loop/local.mk - build rules for src/core/loop
librdp_la_SOURCES += src/core/loop/loop.c
noinst_HEADERS    += src/core/loop/loop.h
