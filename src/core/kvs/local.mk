# src/core/kvs/local.mk - build rules for src/core/kvs
