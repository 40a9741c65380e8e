# src/pnet/local.mk - fabric credential modules (RFC0012, DESIGN.md §9)
librdp_la_SOURCES += src/pnet/pnet.c src/pnet/pnet_env.c \
                     src/pnet/pnet_pool.c src/pnet/pnet_conf.c \
                     src/pnet/pnet_opa.c src/pnet/pnet_ib.c \
                     src/pnet/pnet_tcp.c src/pnet/pnet_simptest.c \
                     src/pnet/pnet_sha256.c src/pnet/pnet_sshot.c \
                     src/pnet/pnet_proc.c src/pnet/pnet_cxi.c
noinst_HEADERS    += src/pnet/pnet.h src/pnet/pnet_int.h \
                     src/pnet/pnet_sha256.h
# where a site keeps the pools' settings, and where their state lives
AM_CPPFLAGS += -DRDP_PNET_CONF_FILE='"$(sysconfdir)/rdpmix/pnet.conf"' \
               -DRDP_PNET_STATE_DIR='"$(localstatedir)/lib/rdpmix/pnet"'
