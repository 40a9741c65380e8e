# include/local.mk - build rules for include
rdpmixinc_HEADERS += \
	include/pmix_common.h \
	include/pmix.h \
	include/pmix_server.h \
	include/pmix_tool.h \
	include/pmix_version.h
rdpmixinc_HEADERS += include/rdpmix.h
