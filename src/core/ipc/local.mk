# src/core/ipc/local.mk - build rules for src/core/ipc
