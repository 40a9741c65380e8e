# tests/unit/local.mk - build rules for tests/unit

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_loop.t tests/unit/test_ipc.t
tests_unit_test_loop_t_SOURCES = tests/unit/test_loop.c
tests_unit_test_loop_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_loop_t_LDADD   = $(RDP_TEST_LIBS)
tests_unit_test_ipc_t_SOURCES  = tests/unit/test_ipc.c
tests_unit_test_ipc_t_CFLAGS   = $(RDP_TEST_CFLAGS)
tests_unit_test_ipc_t_LDADD    = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_loop.t tests/unit/test_ipc.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_wire.t
tests_unit_test_wire_t_SOURCES = tests/unit/test_wire.c tests/unit/wire_testgen.h
tests_unit_test_wire_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_wire_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_wire.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_kvs.t
tests_unit_test_kvs_t_SOURCES = tests/unit/test_kvs.c tests/unit/wire_testgen.h
tests_unit_test_kvs_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_kvs_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_kvs.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_value.t
tests_unit_test_value_t_SOURCES = tests/unit/test_value.c
tests_unit_test_value_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_value_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_value.t
endif

# PMIx_Log channels (src/core/util/logchan.c)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_logchan.t
tests_unit_test_logchan_t_SOURCES = tests/unit/test_logchan.c
tests_unit_test_logchan_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_logchan_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_logchan.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_event.t
tests_unit_test_event_t_SOURCES = tests/unit/test_event.c
tests_unit_test_event_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_event_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_event.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_client_store.t
tests_unit_test_client_store_t_SOURCES = tests/unit/test_client_store.c \
                                         tests/unit/client_testgen.h
tests_unit_test_client_store_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_client_store_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_client_store.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_client_group.t
tests_unit_test_client_group_t_SOURCES = tests/unit/test_client_group.c
tests_unit_test_client_group_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_client_group_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_client_group.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_client_api.t
# fence.c and fence_board.c again, with their test hooks (RDP_TEST_HOOKS):
# the linker takes them instead of librdp.la's
tests_unit_test_client_api_t_SOURCES = tests/unit/test_client_api.c \
                                       tests/unit/client_testgen.h \
                                       src/core/client/fence.c \
                                       src/core/client/fence_board.c
tests_unit_test_client_api_t_CPPFLAGS = $(AM_CPPFLAGS) -DRDP_TEST_HOOKS
tests_unit_test_client_api_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_client_api_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_client_api.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_regex.t
tests_unit_test_regex_t_SOURCES = tests/unit/test_regex.c
tests_unit_test_regex_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_regex_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_regex.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_server_nspace.t
tests_unit_test_server_nspace_t_SOURCES = tests/unit/test_server_nspace.c
tests_unit_test_server_nspace_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_server_nspace_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_server_nspace.t

check_PROGRAMS += tests/unit/test_server_nswait.t
tests_unit_test_server_nswait_t_SOURCES = tests/unit/test_server_nswait.c
tests_unit_test_server_nswait_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_server_nswait_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_server_nswait.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_pnet.t
tests_unit_test_pnet_t_SOURCES = tests/unit/test_pnet.c
tests_unit_test_pnet_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_pnet_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_pnet.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_server_pnet.t
tests_unit_test_server_pnet_t_SOURCES = tests/unit/test_server_pnet.c
tests_unit_test_server_pnet_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_server_pnet_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_server_pnet.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_server_coll.t
tests_unit_test_server_coll_t_SOURCES = tests/unit/test_server_coll.c
tests_unit_test_server_coll_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_server_coll_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_server_coll.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_server_group.t
tests_unit_test_server_group_t_SOURCES = tests/unit/test_server_group.c
tests_unit_test_server_group_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_server_group_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_server_group.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_coll_sched.t
tests_unit_test_coll_sched_t_SOURCES = tests/unit/test_coll_sched.c
tests_unit_test_coll_sched_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_coll_sched_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_coll_sched.t
endif

# rdpmix-run / rdpmixd internals (src/run)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_run_ctl.t tests/unit/test_run_iof.t \
                  tests/unit/test_run_chan.t
tests_unit_test_run_ctl_t_SOURCES  = tests/unit/test_run_ctl.c
tests_unit_test_run_ctl_t_CFLAGS   = $(RDP_TEST_CFLAGS)
tests_unit_test_run_ctl_t_LDADD    = src/run/librdprun.la $(RDP_TEST_LIBS)
tests_unit_test_run_iof_t_SOURCES  = tests/unit/test_run_iof.c
tests_unit_test_run_iof_t_CFLAGS   = $(RDP_TEST_CFLAGS)
tests_unit_test_run_iof_t_LDADD    = src/run/librdprun.la $(RDP_TEST_LIBS)
tests_unit_test_run_chan_t_SOURCES = tests/unit/test_run_chan.c
tests_unit_test_run_chan_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_chan_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_ctl.t tests/unit/test_run_iof.t \
         tests/unit/test_run_chan.t
check_PROGRAMS += tests/unit/test_run_hosts.t
tests_unit_test_run_hosts_t_SOURCES = tests/unit/test_run_hosts.c
tests_unit_test_run_hosts_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_hosts_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_hosts.t
check_PROGRAMS += tests/unit/test_run_fabric.t
tests_unit_test_run_fabric_t_SOURCES = tests/unit/test_run_fabric.c
tests_unit_test_run_fabric_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_fabric_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_fabric.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_topo.t
tests_unit_test_topo_t_SOURCES = tests/unit/test_topo.c
tests_unit_test_topo_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_topo_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_topo.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_data_api.t
tests_unit_test_data_api_t_SOURCES = tests/unit/test_data_api.c \
                                     tests/unit/wire_testgen.h
tests_unit_test_data_api_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_data_api_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_data_api.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_coll_engine.t
tests_unit_test_coll_engine_t_SOURCES = tests/unit/test_coll_engine.c
tests_unit_test_coll_engine_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_coll_engine_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_coll_engine.t
endif

# rdpmixd's fork/exec (src/run/spawn.c)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_run_spawn.t
tests_unit_test_run_spawn_t_SOURCES = tests/unit/test_run_spawn.c
tests_unit_test_run_spawn_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_spawn_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_spawn.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_server_local_get.t
tests_unit_test_server_local_get_t_SOURCES = tests/unit/test_server_local_get.c
tests_unit_test_server_local_get_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_server_local_get_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_server_local_get.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_coll_select.t
tests_unit_test_coll_select_t_SOURCES = tests/unit/test_coll_select.c
tests_unit_test_coll_select_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_coll_select_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_coll_select.t
endif

# src/ucx: the UCX transport (transports in one process over tcp and shm)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_ucx_tl.t
tests_unit_test_ucx_tl_t_SOURCES = tests/unit/test_ucx_tl.c \
                                   tests/unit/test_ucx_harness.h
tests_unit_test_ucx_tl_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_ucx_tl_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_ucx_tl.t
endif

# src/ucx/ucx_gmac.c: the fast AES-256-GMAC against libcrypto's AES-GCM
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_ucx_gmac.t
tests_unit_test_ucx_gmac_t_SOURCES = tests/unit/test_ucx_gmac.c
tests_unit_test_ucx_gmac_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_ucx_gmac_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_ucx_gmac.t
endif

# the collective engine over the UCX transport (4 servers in one process)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_ucx_coll.t
tests_unit_test_ucx_coll_t_SOURCES = tests/unit/test_ucx_coll.c \
                                     tests/unit/test_ucx_harness.h
tests_unit_test_ucx_coll_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_ucx_coll_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_ucx_coll.t
endif

# rdpmix-run's placement of ranks on nodes (src/run/place.c)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_run_place.t
tests_unit_test_run_place_t_SOURCES = tests/unit/test_run_place.c
tests_unit_test_run_place_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_place_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_place.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_coll_p2p.t
tests_unit_test_coll_p2p_t_SOURCES = tests/unit/test_coll_p2p.c
tests_unit_test_coll_p2p_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_coll_p2p_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_coll_p2p.t
endif

# what a launch needs of the machine (src/run/limits.c)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_run_heap.t
tests_unit_test_run_heap_t_SOURCES = tests/unit/test_run_heap.c
tests_unit_test_run_heap_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_heap_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_heap.t

check_PROGRAMS += tests/unit/test_run_limits.t
tests_unit_test_run_limits_t_SOURCES = tests/unit/test_run_limits.c
tests_unit_test_run_limits_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_limits_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_limits.t
endif

# rdpmix-run's publish/lookup data store (src/run/datasvc.c)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_run_datasvc.t
tests_unit_test_run_datasvc_t_SOURCES = tests/unit/test_run_datasvc.c
tests_unit_test_run_datasvc_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_run_datasvc_t_LDADD   = src/run/librdprun.la $(RDP_TEST_LIBS)
TESTS += tests/unit/test_run_datasvc.t
endif

# SHA-256 / HMAC-SHA256 of pnet (FIPS and RFC 4231 vectors)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_pnet_sha256.t
tests_unit_test_pnet_sha256_t_SOURCES = tests/unit/test_pnet_sha256.c
tests_unit_test_pnet_sha256_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_pnet_sha256_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_pnet_sha256.t

check_PROGRAMS += tests/unit/test_pnet_ib.t
tests_unit_test_pnet_ib_t_SOURCES = tests/unit/test_pnet_ib.c
tests_unit_test_pnet_ib_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_pnet_ib_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_pnet_ib.t
EXTRA_DIST += tests/data/ib2pkg.xml tests/data/nohca2pkg.xml

# sshot's CXI services: a stand-in libcxi (dlopen'ed by path)
check_PROGRAMS += tests/unit/test_pnet_cxi.t
tests_unit_test_pnet_cxi_t_SOURCES = tests/unit/test_pnet_cxi.c
tests_unit_test_pnet_cxi_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_pnet_cxi_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_pnet_cxi.t
check_LTLIBRARIES += tests/unit/libfakecxi.la
tests_unit_libfakecxi_la_SOURCES = tests/unit/fake_libcxi.c
tests_unit_libfakecxi_la_LDFLAGS = -module -avoid-version -shared \
                                   -rpath /nowhere
endif

# the RDPMIX_* settings table (src/core/util/config_table.c)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_config.t
tests_unit_test_config_t_SOURCES = tests/unit/test_config.c
tests_unit_test_config_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_config_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_config.t
endif

# required info directives and the supported-attribute table
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_directive.t
tests_unit_test_directive_t_SOURCES = tests/unit/test_directive.c
tests_unit_test_directive_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_directive_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_directive.t
endif

# every enumeration value of pmix_common.h has a string (pretty.c); the
# value list is generated from the header, so a new constant is tested
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_pretty.t
tests_unit_test_pretty_t_SOURCES  = tests/unit/test_pretty.c
nodist_tests_unit_test_pretty_t_SOURCES = tests/unit/enum_values.h
tests_unit_test_pretty_t_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/tests/unit
tests_unit_test_pretty_t_CFLAGS   = $(RDP_TEST_CFLAGS)
tests_unit_test_pretty_t_LDADD    = $(RDP_TEST_LIBS) -ldl
TESTS += tests/unit/test_pretty.t
endif
tests/unit/enum_values.h: $(top_srcdir)/include/pmix_common.h \
                          $(top_srcdir)/src/core/util/gen_enum_values.sh
	$(AM_V_GEN)mkdir -p tests/unit && \
	$(SHELL) $(top_srcdir)/src/core/util/gen_enum_values.sh \
	    $(top_srcdir)/include/pmix_common.h > $@.tmp && mv $@.tmp $@
tests/unit/test_pretty_t-test_pretty.$(OBJEXT): tests/unit/enum_values.h
CLEANFILES += tests/unit/enum_values.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_query.t
tests_unit_test_query_t_SOURCES = tests/unit/test_query.c
tests_unit_test_query_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_query_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_query.t
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_server_hostcall.t
tests_unit_test_server_hostcall_t_SOURCES = tests/unit/test_server_hostcall.c
tests_unit_test_server_hostcall_t_CFLAGS  = $(RDP_TEST_CFLAGS)
tests_unit_test_server_hostcall_t_LDADD   = $(RDP_TEST_LIBS)
TESTS += tests/unit/test_server_hostcall.t
endif
