# src/core/common/local.mk - build rules for src/core/common
librdp_la_SOURCES += src/core/common/runtime.c src/core/common/event.c
noinst_HEADERS    += src/core/common/runtime.h
