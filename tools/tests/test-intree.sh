#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-intree.sh - the suite as a kselftest target of a real kernel tree.
#
# Puts the payload (tools/lib.sh's PAYLOAD) into a copy of Debian's
# linux-source tree as tools/testing/selftests/module_async
# (tools/vm/ksft-install.sh: hard links to the cache, never written) and
# checks the kselftest ways in:
#   make -C tools/testing/selftests TARGETS=module_async [KDIR=...]
#   ... run_tests, ... install INSTALL_PATH=..., run_kselftest.sh -c
#   ... O=DIR (out of the source tree)
#   make O=DIR kselftest TARGETS=module_async KDIR=... (top level)
#   the test modules left to lib.mk (an older one given the newer rules)
# The test modules are built against Debian's stock headers
# (tools/kernel/fetch-kernel.sh). The host cannot load them, so every run here
# must be a whole-suite SKIP with a sane reason in well-formed KTAP, parsed
# by the tree's own KTAP parser; the suite's cases run in the VM.
#
# usage: test-intree.sh [--source DIR] [--kernel ENTRY] [--out DIR] [--no-toplevel]
#   --source DIR    unpacked kernel source (default: tools/kernel/fetch-source.sh)
#   --kernel ENTRY  kernel entry whose kdir the test modules are built
#                   against (default: tools/kernel/fetch-kernel.sh)
#   --out DIR       scratch directory (default: build/intree)
#   --no-toplevel   skip the top-level "make O=... kselftest" check (it
#                   configures a tinyconfig tree and installs its headers)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"

TEST_MODULES=$(make -s -C "$TOP/modules" list)
readonly TEST_MODULES

src='' entry='' out=$TOP/build/intree toplevel=1
while [ $# -gt 0 ]; do
	case $1 in
	--source) need_arg "$1" $#; src=$2; shift 2 ;;
	--kernel) need_arg "$1" $#; entry=$2; shift 2 ;;
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	--no-toplevel) toplevel=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done

need_cmd make gcc rsync python3 cp
if [ -z "$src" ]; then
	src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) || die "could not fetch the source"
fi
[ -f "$src/tools/testing/selftests/lib.mk" ] || die "$src is not a kernel source tree"
if [ -z "$entry" ]; then
	entry=$("$TOOLS/kernel/fetch-kernel.sh" | tail -n 1) ||
		die "could not fetch the stock kernel"
fi
kdir=$(readlink -f "$entry/kdir")
krel=$(cat "$entry/krel")
[ -f "$kdir/Makefile" ] || die "$entry/kdir is not a kernel build tree"
kunit=$src/tools/testing/kunit
mkdir -p "$out"
out=$(cd "$out" && pwd)

# run LOG CMD...: run a command with its output in LOG (and in this log,
# indented); its status is the command's.  Through a pipe: the kselftest
# runner appends to /dev/stdout, which on a file would overwrite.
run()
{
	local log=$1 rc=0

	shift
	echo "\$ $*" >"$log"
	"$@" 2>&1 | cat >>"$log" || rc=$?
	indent <"$log"
	return "$rc"
}

# ---- the tree --------------------------------------------------------------

# The tree, with this directory in it afresh: tools/vm/ksft-install.sh.
tree=$("$TOOLS/vm/ksft-install.sh" --source "$src" --tree "$out/linux" | tail -n 1) ||
	die "could not put the suite into a copy of $src"
selftests=$tree/tools/testing/selftests
suite=$selftests/module_async

# A tree older than the suite (6.1) is given what tools/compat supplies the
# standalone build; a newer one (7.2) nothing.
mapfile -t compat < <(compat_make_args "$selftests")

ksft_make()
{
	make -C "$selftests" TARGETS=module_async ${compat[@]+"${compat[@]}"} "$@"
}

# The whole-suite SKIP of a host that cannot load the test modules: the
# prerequisite module_async.sh finds missing first, on this host.
expected_skip()
{
	if [ "$(id -u)" -ne 0 ]; then
		echo "must be run as root"
	elif [ ! -r /proc/modules ]; then
		echo "kernel without module support (CONFIG_MODULES)"
	elif [ "$(uname -r)" != "$krel" ]; then
		echo "test modules built for $krel, running $(uname -r)"
	fi
}
skip_reason=$(expected_skip)
[ -n "$skip_reason" ] ||
	die "this host runs $krel: it could load the test modules; run the suite in the VM"

# skipped_in LOG [headless]: the kselftest runner's document (in LOG,
# among make's lines) has one result, our test skipped, and is well formed
# unless headless (a runner that prints its result lines alone); nested in
# it, the suite's own document is exactly a whole-suite SKIP with the
# expected reason.
skipped_in()
{
	{ [ -n "${2:-}" ] || "$KTAP" check "$1" >/dev/null; } &&
		[ "$("$KTAP" verdicts "$1")" = "1 $KSFT_TEST skip" ] &&
		"$KTAP" --nested "$KSFT_TEST" check "$1" >/dev/null &&
		[ "$("$KTAP" --nested "$KSFT_TEST" skip-all "$1")" = "$skip_reason" ] &&
		[ -z "$("$KTAP" --nested "$KSFT_TEST" body "$1")" ]
}
readonly SKIPPED="one test, skipped; the suite's own KTAP nested in it"

# The runner's document through the kernel's KTAP parser: one test,
# skipped, no error.
kunit_parses()
{
	local log=$1 ktap=$1.ktap rc=0

	sed -n '/^TAP version 13$/,$p' "$log" >"$ktap"
	"$TOOLS/ktap/ktap-check.py" --kunit "$kunit" --name "${log##*/}" \
		--expect-status skip "$ktap" >"$ktap.check" 2>&1 || rc=$?
	indent <"$ktap.check"
	return $rc
}

modules_built_in()
{
	local dir=$1 m

	for m in $TEST_MODULES; do
		[ -f "$dir/$m.ko" ] || { echo "    no $dir/$m.ko"; return 1; }
		[ "$(modinfo -F vermagic "$dir/$m.ko" | cut -d' ' -f1)" = "$krel" ] ||
			{ echo "    $dir/$m.ko is not built for $krel"; return 1; }
	done
}

no_modules_in() { ! compgen -G "$1/*.ko" >/dev/null; }
executable()
{
	local f

	for f in "$@"; do
		[ -f "$f" ] && [ -x "$f" ] || return 1
	done
}

log_has() { grep -qE -- "$2" "$1"; }
log_lacks() { ! grep -qE -- "$2" "$1"; }
logs=$out/logs
rm -rf "$logs" "$out/install" "$out/out"
mkdir -p "$logs"

# ---- in the source tree, without KDIR: the runner only ---------------------
# KDIR defaults to the running kernel's /lib/modules/<release>/build: point
# it at a directory that is no kernel tree, for the same result everywhere.
verify "in-tree build without a kernel tree: make succeeds" \
	run "$logs/build-nokdir" ksft_make V=1 KDIR=/nonexistent
verify "in-tree build: the runner is built" executable "$suite/module_async"
verify "in-tree build: the runner includes the tree's kselftest.h (-I..)" \
	log_has "$logs/build-nokdir" ' -I\.\. .*module_async\.c'
verify "in-tree build: the cache's kselftest.h is not used" \
	log_lacks "$logs/build-nokdir" 'fetch-source|\.cache/module_async'
verify "in-tree build: with the warnings as errors" \
	log_has "$logs/build-nokdir" '-Wall -Wextra -Werror'
verify "in-tree build without a kernel tree: no test modules" no_modules_in "$suite/modules"

# ---- in the source tree, KDIR=: runner and modules, run_tests ---------------
verify "in-tree build with KDIR: make succeeds" \
	run "$logs/build" ksft_make KDIR="$kdir"
verify "in-tree build with KDIR: every test module built for $krel" \
	modules_built_in "$suite/modules"
verify "in-tree build: modules built with KBUILD_EXTMOD, not M=" \
	grep -q 'KBUILD_EXTMOD=.*modules' "$suite/modules/Makefile"
verify "run_tests: the kselftest runner exits 0" \
	run "$logs/run_tests" ksft_make KDIR="$kdir" run_tests
# run_tests prints a whole document where the tree's run_many() prints
# the version line and the plan (6.1); 7.2's leaves them to
# run_kselftest.sh, and prints its result lines alone.
headless=
grep -q 'TAP version' "$selftests/kselftest/runner.sh" || headless=headless
verify "run_tests: $SKIPPED: SKIP '$skip_reason'${headless:+ (a result line alone)}" \
	skipped_in "$logs/run_tests" $headless
[ -n "$headless" ] ||
	verify "run_tests: the kernel's KTAP parser reads it" kunit_parses "$logs/run_tests"

# ---- install and run_kselftest.sh ------------------------------------------
inst=$out/install
verify "install INSTALL_PATH=: make succeeds" \
	run "$logs/install" ksft_make KDIR="$kdir" install INSTALL_PATH="$inst"
verify "install: module_async.sh and the runner, executable" \
	executable "$inst/module_async/module_async.sh" "$inst/module_async/module_async"
verify "install: config and settings" \
	test -f "$inst/module_async/config" -a -f "$inst/module_async/settings"
verify "install: the test modules where module_async.sh looks (module_async/modules/)" \
	modules_built_in "$inst/module_async/modules"
verify "install: kselftest-list.txt lists module_async:module_async.sh" \
	test "$(grep '^module_async:' "$inst/kselftest-list.txt" 2>/dev/null)" = \
		"module_async:module_async.sh"
verify "installed: run_kselftest.sh -l lists it" \
	run "$logs/list" "$inst/run_kselftest.sh" -l
verify "installed: ... and only it" \
	test "$(grep -c . "$logs/list")" -eq 2 -a \
		"$(tail -n 1 "$logs/list")" = "module_async:module_async.sh"
verify "installed: run_kselftest.sh -c module_async exits 0" \
	run "$logs/run_kselftest" "$inst/run_kselftest.sh" -c module_async
verify "installed: $SKIPPED: SKIP '$skip_reason'" skipped_in "$logs/run_kselftest"
verify "installed: the kernel's KTAP parser reads it" kunit_parses "$logs/run_kselftest"

# ---- clean -------------------------------------------------------------------
verify "clean: make succeeds" run "$logs/clean" ksft_make KDIR="$kdir" clean
verify "clean: runner and modules gone" \
	test ! -e "$suite/module_async" -a ! -e "$suite/modules/ma_gate.ko"

# ---- out of the source tree (O=) --------------------------------------------
o=$out/out
verify "O= build: make succeeds" run "$logs/build-o" ksft_make KDIR="$kdir" O="$o"
verify "O= build: the runner in O=/kselftest/module_async/" \
	executable "$o/kselftest/module_async/module_async"
verify "O= build: the runner not in the source tree" test ! -e "$suite/module_async"
verify "O= build: the modules beside the runner" \
	modules_built_in "$o/kselftest/module_async/modules"
verify "O= install: make succeeds" \
	run "$logs/install-o" ksft_make KDIR="$kdir" O="$o" install INSTALL_PATH="$o/install"
verify "O= install: the runner installed" executable "$o/install/module_async/module_async"
verify "O= install: the modules installed" modules_built_in "$o/install/module_async/modules"
ksft_make KDIR="$kdir" clean >/dev/null 2>&1 || true

# ---- lib.mk builds TEST_GEN_MODS_DIR -------------------------------------------
# The suite's Makefile leaves the test modules to lib.mk, as newer trees'
# lib.mk builds them; a tree whose lib.mk predates that (6.1) is given the
# same rules by tools/vm/ksft-install.sh (tools/kernel/lib.mk-mods), never
# by the suite's own Makefile.
verify "the suite's Makefile defines none of lib.mk's module rules" \
	log_lacks "$suite/Makefile" '^(gen_mods_dir|clean_mods_dir|install_mods_dir):'
verify "the build: no clash of rules" log_lacks "$logs/build" 'warning: (overriding|ignoring)'
verify "the build: the modules built once" \
	test "$(grep -c 'LD \[M\].*ma_gate\.ko' "$logs/build")" -eq 1
if grep -q '^gen_mods_dir:' "$src/tools/testing/selftests/lib.mk"; then
	skip "this tree's own lib.mk builds TEST_GEN_MODS_DIR"
else
	verify "an older lib.mk: given tools/kernel/lib.mk-mods in the copy only" \
		grep -q '^gen_mods_dir:' "$selftests/lib.mk"
fi

# ---- the top level: make O=... kselftest ----------------------------------------
if [ "$toplevel" -eq 1 ]; then
	obj=$out/obj
	if [ ! -f "$obj/.config" ]; then
		run "$logs/tinyconfig" make -s -C "$tree" O="$obj" tinyconfig >/dev/null ||
			die "cannot configure $obj"
	fi
	verify "top level: make O=... kselftest TARGETS=module_async KDIR=... exits 0" \
		run "$logs/kselftest" make -C "$tree" O="$obj" kselftest TARGETS=module_async \
			KDIR="$kdir" ${compat[@]+"${compat[@]}"}
	verify "top level: the modules built for $krel" \
		modules_built_in "$obj/kselftest/module_async/modules"
	verify "top level: $SKIPPED: SKIP '$skip_reason'" skipped_in "$logs/kselftest"
	make -C "$suite" KDIR="$kdir" clean >/dev/null 2>&1 || true
fi

checks_summary
