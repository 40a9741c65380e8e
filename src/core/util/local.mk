# src/core/util/local.mk - build rules for src/core/util
librdp_la_SOURCES += src/core/util/log.c src/core/util/hash.c
noinst_HEADERS    += src/core/util/log.h src/core/util/list.h \
                     src/core/util/alloc.h src/core/util/hash.h
