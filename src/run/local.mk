# src/run/local.mk - build rules for src/run: rdpmixd and rdpmix-run

# code shared by the two programs (and their unit tests)
noinst_LTLIBRARIES += src/run/librdprun.la
src_run_librdprun_la_SOURCES = src/run/ctl.c src/run/chan.c src/run/iof.c \
                               src/run/util.c src/run/spawn.c \
                               src/run/jobinfo.c src/run/place.c \
                               src/run/limits.c src/run/hosts.c \
                               src/run/ctladdr.c src/run/words.c \
                               src/run/datasvc.c src/run/xconn.c \
                               src/run/fabric.c
noinst_HEADERS += src/run/ctl.h src/run/chan.h src/run/iof.h \
                  src/run/util.h src/run/spawn.h src/run/jobinfo.h \
                  src/run/rdpmixd_int.h src/run/place.h src/run/limits.h \
                  src/run/hosts.h src/run/ctladdr.h src/run/words.h \
                  src/run/datasvc.h src/run/datapeer.h \
                  src/run/xconn.h src/run/xconnect.h \
                  src/run/fabric.h

RDP_RUN_CPPFLAGS = $(AM_CPPFLAGS) \
                   -DRDPMIX_LIBDIR='"$(rdpmixlibdir)"' \
                   -DRDPMIX_BINDIR='"$(bindir)"' \
                   -DRDPMIX_BUILD_LIBDIR='"$(abs_top_builddir)/.libs"'

# each daemon links the library statically: it owns one copy of its state
bin_PROGRAMS += src/run/rdpmixd src/run/rdpmix-run
src_run_rdpmixd_SOURCES     = src/run/rdpmixd.c src/run/rdpmixd_job.c \
                              src/run/rdpmixd_pubsub.c \
                              src/run/rdpmixd_event.c \
                              src/run/rdpmixd_hostops.c \
                              src/run/rdpmixd_xconn.c \
                              src/run/rdpmixd_system.c
src_run_rdpmixd_CPPFLAGS    = $(RDP_RUN_CPPFLAGS)
src_run_rdpmixd_LDADD       = src/run/librdprun.la librdp_ucx.la librdp.la
src_run_rdpmix_run_SOURCES  = src/run/rdpmix_run.c src/run/datapeer.c \
                              src/run/xconnect.c
src_run_rdpmix_run_CPPFLAGS = $(RDP_RUN_CPPFLAGS)
src_run_rdpmix_run_LDADD    = src/run/librdprun.la librdp.la

# rdpmix-ps: a tool on the public API (PMIx_tool_init, PMIx_Query_info)
bin_PROGRAMS += src/run/rdpmix-ps
src_run_rdpmix_ps_SOURCES = src/run/rdpmix_ps.c
src_run_rdpmix_ps_LDADD   = libpmix.la

# rdpmix-info: version, build, attributes per function, RDPMIX_* settings
bin_PROGRAMS += src/run/rdpmix-info
src_run_rdpmix_info_SOURCES  = src/run/rdpmix_info.c
src_run_rdpmix_info_CPPFLAGS = $(RDP_RUN_CPPFLAGS)
src_run_rdpmix_info_LDADD    = librdp.la
