# src/core/server/local.mk - build rules for src/core/server
