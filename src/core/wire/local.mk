# src/core/wire/local.mk - build rules for src/core/wire
