# tests/unit/local.mk - build rules for tests/unit
