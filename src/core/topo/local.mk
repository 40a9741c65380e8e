# src/core/topo/local.mk - build rules for src/core/topo (the only hwloc user)
librdp_la_SOURCES += src/core/topo/topo.c src/core/topo/topo_api.c \
                     src/core/topo/topo_near.c
noinst_HEADERS    += src/core/topo/topo.h src/core/topo/topo_near.h
