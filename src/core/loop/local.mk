# src/core/loop/local.mk - build rules for src/core/loop
