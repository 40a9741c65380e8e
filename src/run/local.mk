# src/run/local.mk - build rules for src/run
