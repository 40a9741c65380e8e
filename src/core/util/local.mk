# src/core/util/local.mk - build rules for src/core/util
librdp_la_SOURCES += src/core/util/log.c src/core/util/hash.c
noinst_HEADERS    += src/core/util/log.h src/core/util/list.h \
                     src/core/util/alloc.h src/core/util/hash.h
# value/info helpers and printable names (see value.h)
librdp_la_SOURCES += src/core/util/value.c src/core/util/pretty.c \
                     src/core/util/attr_type.c \
                     src/core/util/info_list.c \
                     src/core/util/logchan.c src/core/util/query.c \
                     src/core/util/config_table.c \
                     src/core/util/directive.c
noinst_HEADERS    += src/core/util/value.h src/core/util/attr_table.h \
                     src/core/util/attr_type.h src/core/util/attr_types.h \
                     src/core/util/status.h src/core/util/error_strings.h \
                     src/core/util/enum_strings.h \
                     src/core/util/logchan.h src/core/util/query.h \
                     src/core/util/config_table.h \
                     src/core/util/directive.h
EXTRA_DIST        += src/core/util/gen_attr_table.sh \
                     src/core/util/gen_error_strings.sh \
                     src/core/util/gen_enum_strings.sh \
                     src/core/util/gen_enum_values.sh
