# src/core/tool/local.mk - build rules for src/core/tool
