# tests/abi/local.mk - build rules for tests/abi
