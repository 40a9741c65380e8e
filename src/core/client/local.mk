# src/core/client/local.mk - build rules for src/core/client
