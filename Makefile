# SPDX-License-Identifier: GPL-2.0
#
# module_async: how module loading interacts with async function calls.
#
# In a kernel tree (tools/testing/selftests/module_async/) this is an
# ordinary kselftest Makefile on ../lib.mk: it builds the C runner, and the
# test modules when KDIR names a configured kernel build.
#
# In a clone of the project it also drives the suite on its own:
#   make vm      fetch Debian's kernel, build, boot the suite in QEMU
#   make check   the project's own tests (host tests, then the suite in a VM)
# See README.

TEST_PROGS := module_async.sh
TEST_GEN_PROGS_EXTENDED := module_async
TEST_FILES := config settings

RUNNER_SRCS := module_async.c $(filter-out lib/test_%.c,$(wildcard lib/*.c))
RUNNER_HDRS := $(wildcard lib/*.h)

ifneq ($(wildcard ../lib.mk),)
# In a kernel tree: the real kselftest.h sits one directory up.
KSFT_DIR := ..
include ../lib.mk
else
# Standalone: kselftest.h comes from Debian's linux-source-6.1, fetched and
# unpacked once into the cache by tools/fetch-source.sh (evaluated only
# when a recipe needs it).
OUTPUT ?= $(CURDIR)/build
KSFT_DIR ?= $(shell tools/fetch-source.sh $(if $(KVER),--kver $(KVER)))/tools/testing/selftests
all: $(OUTPUT)/module_async

clean:
	$(RM) -r $(OUTPUT)
	$(MAKE) -C modules clean
endif

CFLAGS += -O2 -g -Wall -Wextra -Werror -I$(KSFT_DIR)

$(OUTPUT)/module_async: $(RUNNER_SRCS) $(RUNNER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(RUNNER_SRCS) $(LDFLAGS)

# The test modules, against a configured kernel tree or a headers package.
modules:
ifeq ($(KDIR),)
	$(error set KDIR to a kernel build or headers directory)
endif
	$(MAKE) -C modules KDIR=$(KDIR)

KERNEL ?= stock
ALLOW_DEADLOCK ?= 0
SUITE_ARGS ?=
PATCH ?=
allow_deadlock := $(if $(filter 1 yes y,$(ALLOW_DEADLOCK)),--allow-deadlock)

vm:
	tools/vm.sh --kernel $(KERNEL) $(if $(KVER),--kver $(KVER)) \
		$(if $(KDIR),--kdir $(KDIR)) $(foreach p,$(PATCH),--patch $(p)) \
		$(allow_deadlock) -- $(SUITE_ARGS)

matrix:
	tools/matrix.sh $(allow_deadlock)

check:
	tools/check.sh

.PHONY: modules vm matrix check
