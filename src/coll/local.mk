# src/coll/local.mk - build rules for src/coll (the collective engine)
librdp_la_SOURCES += src/coll/sched.c src/coll/sched_rd.c \
                     src/coll/sched_bruck.c src/coll/sched_ring.c \
                     src/coll/sched_dissem.c src/coll/select.c \
                     src/coll/coll.c src/coll/coll_ring.c \
                     src/coll/coll_early.c src/coll/loopback.c \
                     src/coll/keytab.c
noinst_HEADERS    += src/coll/tl.h src/coll/sched.h src/coll/sched_int.h \
                     src/coll/select.h src/coll/coll.h src/coll/msg.h \
                     src/coll/coll_int.h src/coll/loopback.h \
                     src/coll/keytab.h
