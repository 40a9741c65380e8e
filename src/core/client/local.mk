# src/core/client/local.mk - build rules for src/core/client
librdp_la_SOURCES += src/core/client/client.c src/core/client/init.c \
                     src/core/client/put.c src/core/client/fence.c \
                     src/core/client/get.c src/core/client/store.c \
                     src/core/client/resolve.c src/core/client/ops.c \
                     src/core/client/unsupported.c src/core/client/group.c \
                     src/core/client/query.c src/core/client/fence_board.c
librdp_la_SOURCES += src/core/client/attach.c
noinst_HEADERS    += src/core/client/client_int.h src/core/client/store.h
noinst_HEADERS    += src/core/client/attach.h
