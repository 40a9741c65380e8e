# include/local.mk - build rules for include
