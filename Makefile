# SPDX-License-Identifier: GPL-2.0
#
# module_async: how module loading interacts with async function calls.
#
# In a kernel tree (tools/testing/selftests/module_async/) this is an
# ordinary kselftest Makefile on ../lib.mk: it builds the C runner, and the
# test modules when KDIR names a kernel build tree (default: the running
# kernel's, /lib/modules/$(uname -r)/build; none there, no modules):
#   make -C tools/testing/selftests TARGETS=module_async KDIR=... [run_tests]
#   make -C tools/testing/selftests TARGETS=module_async KDIR=... \
#        install INSTALL_PATH=...
#
# In a clone of the project it also drives the suite on its own:
#   make vm      fetch Debian's kernel, build, boot the suite in QEMU
#   make lava    the same as a LAVA job, run by lava-dispatcher
#   make check   the project's own tests (host tests, then the suite in a VM)
#   make bench   what a VM run costs here, beside a boot of the kernel alone
#   make reliability  bad input, cache faults, interrupts, repetitions
# See README.

# $(call q,WORD): WORD quoted for the shell, so that a variable's value
# reaches the script as one argument, never as shell code.
q = '$(subst ','\'',$(1))'

# Paths make builds in cannot hold a space (make splits its words at
# blanks), nor what make or a recipe's shell reads in a word: the
# checkout's and those given as OUTPUT, KDIR or INSTALL_PATH are refused
# here, before anything is written (tools/lib.sh's path_problem).
path_problems := $(if $(wildcard tools/lib.sh),$(shell PROG=make bash -c '. tools/lib.sh && for a; do \
	why=$$(path_problem "$${a#*=}"); [ -z "$$why" ] || echo "$$a: $$why"; done' make \
	$(foreach v,OUTPUT KDIR INSTALL_PATH,$(if $($(v)),$(call q,$(v)=$($(v))))) 2>&1))
ifneq ($(path_problems),)
$(error $(path_problems))
endif

TEST_PROGS := module_async.sh
TEST_GEN_PROGS_EXTENDED := module_async
TEST_FILES := config settings

RUNNER_SRCS := module_async.c $(wildcard runner/*.c) $(filter-out lib/test_%.c,$(wildcard lib/*.c))
RUNNER_HDRS := $(wildcard runner/*.h lib/*.h)

ifneq ($(wildcard ../lib.mk),)
# In a kernel tree: the real kselftest.h sits one directory up.
KSFT_DIR := ..

# The test modules (modules/Makefile: make -C $(KDIR) KBUILD_EXTMOD=...),
# built in place like every TEST_GEN_MODS_DIR, and only against a kernel
# build tree: without one the suite SKIPs, saying the modules are missing.
KDIR ?= /lib/modules/$(shell uname -r)/build
ifneq ($(wildcard $(KDIR)/Makefile),)
TEST_GEN_MODS_DIR := modules
endif

# lib.mks since 2024 build, install and clean TEST_GEN_MODS_DIR themselves
# (targets gen_mods_dir and clean_mods_dir; installed to
# $(INSTALL_PATH)/modules/); with an older one, as in 6.1, the rules below
# do the same under the same names.
lib_mk_builds_mods := $(shell grep -ls '^gen_mods_dir:' ../lib.mk)

include ../lib.mk

ifneq ($(TEST_GEN_MODS_DIR),)
ifeq ($(lib_mk_builds_mods),)
all: gen_mods_dir
install: install_mods_dir
clean: clean_mods_dir

gen_mods_dir:
	$(Q)$(MAKE) -C $(TEST_GEN_MODS_DIR)

install_mods_dir: gen_mods_dir
ifdef INSTALL_PATH
	mkdir -p $(INSTALL_PATH)/$(TEST_GEN_MODS_DIR)
	rsync -a $(TEST_GEN_MODS_DIR)/*.ko $(INSTALL_PATH)/$(TEST_GEN_MODS_DIR)/
endif

clean_mods_dir:
	$(Q)$(MAKE) -C $(TEST_GEN_MODS_DIR) clean

.PHONY: gen_mods_dir install_mods_dir clean_mods_dir
endif

# Built into another directory (OUTPUT=, O=): the runner looks for the
# modules beside itself, so they go there too.
ifneq ($(abspath $(OUTPUT)),$(CURDIR))
all: output_mods_dir
EXTRA_CLEAN += $(OUTPUT)/$(TEST_GEN_MODS_DIR)

output_mods_dir: gen_mods_dir
	mkdir -p $(OUTPUT)/$(TEST_GEN_MODS_DIR)
	rsync -a $(TEST_GEN_MODS_DIR)/*.ko $(OUTPUT)/$(TEST_GEN_MODS_DIR)/

.PHONY: output_mods_dir
endif
endif

CFLAGS += $(KHDR_INCLUDES)
else
# Standalone: kselftest.h comes from Debian's linux-source-6.1, fetched and
# unpacked once into the cache by tools/kernel/fetch-source.sh (evaluated only
# when a recipe needs it).
OUTPUT ?= $(CURDIR)/build
ksft_source = $(shell tools/kernel/fetch-source.sh $(if $(KVER),--kver $(call q,$(KVER))))
KSFT_DIR ?= $(or $(ksft_source),$(error no linux-source for kselftest.h (tools/kernel/fetch-source.sh failed: see above)))/tools/testing/selftests
# What older trees lack, from tools/compat (never in a kernel tree's copy).
include tools/compat/compat.mk
CFLAGS += $(COMPAT_CFLAGS)
all: $(OUTPUT)/module_async
# Static, for the VM: its exec skips the dynamic loader, 12 ms under TCG.
LDFLAGS += -static

clean:
	$(RM) -r $(OUTPUT)
	$(MAKE) -C modules clean

.PHONY: all clean
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
	$(MAKE) -C modules KDIR=$(KDIR) \
		$(if $(COMPAT_KCFLAGS),KCFLAGS=$(call q,$(strip $(KCFLAGS) $(COMPAT_KCFLAGS))))

# KERNEL: stock (the default; vanilla when PATCH= is given), vanilla,
# patched, fixed or a bzImage, with KDIR= its build tree or headers and MODDIR=
# its module tree (see tools/vm/vm.sh --help).  DIST: the Debian release of
# the stock kernel (bullseye, bookworm, bookworm-backports, trixie, sid;
# default bookworm).  SRC: the linux-source-X.Y the source kernels are built
# from (6.1, the default; 6.12; 7.2), results in build/vm/KERNEL-X.Y.  KSRC:
# a kernel tree of one's own built instead, only read (build/vm/ksrc-NAME).
KERNEL ?=
DIST ?=
SRC ?=
KSRC ?=
MODDIR ?=
ALLOW_DEADLOCK ?= 0
SUITE_ARGS ?=
PATCH ?=
# A boolean's usual spellings; anything else is a usage error (exit 2).
bool_true := 1 y yes true on
bool_false := 0 n no false off
ifneq ($(filter-out $(bool_true) $(bool_false),$(ALLOW_DEADLOCK))$(word 2,$(ALLOW_DEADLOCK)),)
$(error ALLOW_DEADLOCK=$(ALLOW_DEADLOCK): say 1, y, yes, true or on; 0, n, no, false or off)
endif
allow_deadlock := $(if $(filter $(bool_true),$(ALLOW_DEADLOCK)),--allow-deadlock)

# VIA=run_kselftest: the guest runs the kselftest install (run_kselftest.sh
# -c module_async) instead of module_async.sh directly.
VIA ?=

# The kernel's options, shared by make vm and make lava.
kernel_options = $(if $(KERNEL),--kernel $(call q,$(KERNEL))) \
		$(if $(DIST),--dist $(call q,$(DIST))) \
		$(if $(SRC),--src $(call q,$(SRC))) \
		$(if $(KSRC),--ksrc $(call q,$(KSRC))) \
		$(if $(KVER),--kver $(call q,$(KVER))) \
		$(if $(KDIR),--kdir $(call q,$(KDIR))) \
		$(if $(MODDIR),--moddir $(call q,$(MODDIR))) \
		$(foreach p,$(PATCH),--patch $(call q,$(p)))

vm:
	tools/vm/vm.sh $(kernel_options) \
		$(if $(VIA),--via $(call q,$(VIA))) $(allow_deadlock) \
		-- $(foreach a,$(SUITE_ARGS),$(call q,$(a)))

# The same kernel and suite as a LAVA job, run by lava-dispatcher here.
lava:
	tools/lava/lava.sh $(kernel_options) $(allow_deadlock) \
		-- $(foreach a,$(SUITE_ARGS),$(call q,$(a)))

matrix:
	tools/vm/matrix.sh $(allow_deadlock)

check:
	tools/check.sh

bench:
	tools/bench

# The host side under bad input, cache faults, interrupts, concurrent runs,
# and REPEAT (default 50) runs of the suite in one boot.
reliability:
	tools/reliability $(if $(REPEAT),--repeat $(call q,$(REPEAT)))

# The suite as the patch series a maintainer receives (SRC=: against
# linux-source-X.Y, default 7.2), in build/series/.
series:
	tools/kernel/series.sh $(if $(SRC),--src $(call q,$(SRC)))

.PHONY: modules vm lava matrix check bench reliability series
