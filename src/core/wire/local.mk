# src/core/wire/local.mk - build rules for src/core/wire
librdp_la_SOURCES += src/core/wire/wire.c
noinst_HEADERS    += src/core/wire/wire.h src/core/wire/proto.h
librdp_la_SOURCES += src/core/wire/data_api.c
