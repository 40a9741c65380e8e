# src/core/util/local.mk - build rules for src/core/util
