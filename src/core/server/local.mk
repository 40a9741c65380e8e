# src/core/server/local.mk - build rules for src/core/server
librdp_la_SOURCES += src/core/server/server.c src/core/server/nspace.c \
                     src/core/server/client.c src/core/server/conn.c \
                     src/core/server/coll.c src/core/server/modex.c \
                     src/core/server/ops.c src/core/server/evcache.c \
                     src/core/server/cleanup.c src/core/server/monitor.c \
                     src/core/server/misc.c src/core/server/regex.c \
                     src/core/server/fetch.c src/core/server/engine.c \
                     src/core/server/depart.c src/core/server/xchg.c \
                     src/core/server/p2p.c src/core/server/dmodex.c \
                     src/core/server/fence.c src/core/server/conndisc.c \
                     src/core/server/util.c src/core/server/hostop.c \
                     src/core/server/peer.c src/core/server/group.c \
                     src/core/server/group_block.c \
                     src/core/server/group_host.c \
                     src/core/server/query.c \
                     src/core/server/slurmfence.c \
                     src/core/server/fence_board.c \
                     src/core/server/nswait.c
noinst_HEADERS    += src/core/server/server_int.h src/core/server/regex.h \
                     src/core/server/xchg.h src/core/server/p2p.h \
                     src/core/server/coll.h src/core/server/group.h \
                     src/core/server/group_host.h \
                     src/core/server/slurmfence.h \
                     src/core/server/nswait.h
librdp_la_SOURCES += src/core/server/connect.c
librdp_la_SOURCES += src/core/server/tool.c
noinst_HEADERS    += src/core/server/connect.h
noinst_HEADERS    += src/core/server/trust.h
librdp_la_SOURCES += src/core/server/trust.c
librdp_la_SOURCES += src/core/server/hostcall.c
noinst_HEADERS    += src/core/server/hostcall.h
librdp_la_SOURCES += src/core/server/pnetval.c
