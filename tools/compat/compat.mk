# SPDX-License-Identifier: GPL-2.0
#
# What the suite needs from a kernel tree that older trees lack, for the
# standalone build only: included by ../../GNUmakefile and
# ../../lib/Makefile; never part of the suite in a kernel tree, which builds
# against its own tree alone.
#
# COMPAT_CFLAGS: for the runner, against $(KSFT_DIR)/kselftest.h (expanded
# when a recipe needs it): ksft/ before it on the include path where it
# lacks ksft_test_result_code() (ksft/kselftest.h adds it).  The test
# modules' flags are tools/lib.sh's COMPAT_KCFLAGS.

COMPAT_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
COMPAT_CFLAGS = $(if $(shell grep -ls 'ksft_test_result_code' $(KSFT_DIR)/kselftest.h),,\
	-I$(COMPAT_DIR)/ksft)
