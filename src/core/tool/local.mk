# src/core/tool/local.mk - build rules for src/core/tool
librdp_la_SOURCES += src/core/tool/tool.c src/core/tool/rendezvous.c
noinst_HEADERS    += src/core/tool/rendezvous.h
