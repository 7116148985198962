# SPDX-License-Identifier: GPL-2.0
#
# module_async: how module loading interacts with async function calls.
#
# Builds the runner, and the test modules when KDIR names a kernel build
# tree (default: the running kernel's, /lib/modules/$(uname -r)/build;
# none there, no modules, and the suite skips saying so):
#   make -C tools/testing/selftests TARGETS=module_async KDIR=... [run_tests]
#   make -C tools/testing/selftests TARGETS=module_async KDIR=... \
#        install INSTALL_PATH=...
# See README.

TEST_PROGS := module_async.sh
TEST_GEN_PROGS_EXTENDED := module_async
TEST_FILES := config settings

# The test modules (modules/Makefile: make -C $(KDIR) KBUILD_EXTMOD=...),
# built, installed and cleaned by lib.mk like every TEST_GEN_MODS_DIR.
KDIR ?= /lib/modules/$(shell uname -r)/build
ifneq ($(wildcard $(KDIR)/Makefile),)
TEST_GEN_MODS_DIR := modules
endif

RUNNER_SRCS := module_async.c $(wildcard runner/*.c lib/*.c)
RUNNER_HDRS := $(wildcard runner/*.h lib/*.h)

CFLAGS += -O2 -g -Wall -Wextra -Werror -I.. $(KHDR_INCLUDES)

include ../lib.mk

$(OUTPUT)/module_async: $(RUNNER_SRCS) $(RUNNER_HDRS)
	$(CC) $(CFLAGS) -o $@ $(RUNNER_SRCS) $(LDFLAGS)

# Built into another directory (O=, OUTPUT=): the runner looks for the
# modules beside itself, so they go there too.
ifneq ($(TEST_GEN_MODS_DIR),)
ifneq ($(abspath $(OUTPUT)),$(CURDIR))
all: output_mods_dir
EXTRA_CLEAN += $(OUTPUT)/$(TEST_GEN_MODS_DIR)

output_mods_dir: gen_mods_dir
	mkdir -p $(OUTPUT)/$(TEST_GEN_MODS_DIR)
	cp $(TEST_GEN_MODS_DIR)/*.ko $(OUTPUT)/$(TEST_GEN_MODS_DIR)/

.PHONY: output_mods_dir
endif
endif
