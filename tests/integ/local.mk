# tests/integ/local.mk - build rules for tests/integ
