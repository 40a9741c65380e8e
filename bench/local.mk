# bench/local.mk - build rules for bench
