#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-intree.sh - the suite as a kselftest target of a copy of Debian's
# linux-source: build without and with KDIR, run_tests, clean, O=DIR, and make
# O=DIR kselftest at the top level.  The modules are built for a kernel this host
# does not run: every run is a whole-suite SKIP.  (Run in a VM: test-via.sh.)
#
# usage: test-intree.sh [--source DIR] [--kernel ENTRY] [--out DIR] [--no-toplevel]
#   --source DIR    unpacked kernel source (default: tools/kernel/fetch-source.sh)
#   --kernel ENTRY  the kernel the modules are built for (default: fetch-kernel.sh)
#   --out DIR       scratch directory (default: build/intree)
#   --no-toplevel   no top-level "make O=... kselftest" (it configures a tinyconfig tree)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"

TEST_MODULES=$(make -s --no-print-directory -C "$TOP/modules" list)
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
[ -n "$src" ] || src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) ||
	die "could not fetch the source"
[ -f "$src/tools/testing/selftests/lib.mk" ] || die "$src is not a kernel source tree"
[ -n "$entry" ] || entry=$("$TOOLS/kernel/fetch-kernel.sh" | tail -n 1) ||
	die "could not fetch the stock kernel"
kdir=$(readlink -f "$entry/kdir")
krel=$(cat "$entry/krel")
[ -f "$kdir/Makefile" ] || die "$entry/kdir is not a kernel build tree"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# run LOG CMD...: CMD, its output in LOG and here, indented; through a pipe,
# as the kselftest runner appends to /dev/stdout (on a file, it overwrites).
run()
{
	local log=$1 rc=0

	shift
	echo "\$ $*" >"$log"
	"$@" 2>&1 | cat >>"$log" || rc=$?
	indent <"$log"
	return "$rc"
}

tree=$("$TOOLS/vm/ksft-install.sh" --source "$src" --tree "$out/linux" | tail -n 1) ||
	die "could not put the suite into a copy of $src"
selftests=$tree/tools/testing/selftests
suite=$selftests/module_async

# A tree older than the suite (6.1) is given tools/compat; a newer one nothing.
mapfile -t compat < <(compat_make_args "$selftests")

ksft_make()
{
	make -j"$(nproc)" -C "$selftests" TARGETS=module_async ${compat[@]+"${compat[@]}"} "$@"
}

# The whole-suite SKIP of this host: the first prerequisite module_async.sh misses.
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

# skipped_in LOG [headless]: LOG's kselftest document is well formed (headless:
# result lines alone), our test skipped, nested in it a whole-suite SKIP alone.
skipped_in()
{
	{ [ -n "${2:-}" ] || "$KTAP" check "$1" >/dev/null; } &&
		[ "$("$KTAP" verdicts "$1")" = "1 $KSFT_TEST skip" ] &&
		"$KTAP" --nested "$KSFT_TEST" check "$1" >/dev/null &&
		[ "$("$KTAP" --nested "$KSFT_TEST" skip-all "$1")" = "$skip_reason" ] &&
		[ -z "$("$KTAP" --nested "$KSFT_TEST" body "$1")" ]
}
readonly SKIPPED="one test, skipped; the suite's own KTAP nested in it"

# modules_built_in DIR: every test module in DIR, built for $krel.
modules_built_in()
{
	local m

	for m in $TEST_MODULES; do
		[ -f "$1/$m.ko" ] || { echo "    no $1/$m.ko"; return 1; }
		[ "$(modinfo -F vermagic "$1/$m.ko" | cut -d' ' -f1)" = "$krel" ] ||
			{ echo "    $1/$m.ko is not built for $krel"; return 1; }
	done
}

no_modules_in() { ! compgen -G "$1/*.ko" >/dev/null; }
log_lacks() { ! grep -qE -- "$2" "$1"; }
logs=$out/logs
rm -rf "$logs" "$out/out"
mkdir -p "$logs"

# KDIR that is no kernel tree (not the host's default): one result everywhere.
verify "in-tree build without a kernel tree: make succeeds" \
	run "$logs/build-nokdir" ksft_make V=1 KDIR=/nonexistent
verify "in-tree build: the runner is built" test -x "$suite/module_async"
verify "in-tree build: the runner includes the tree's kselftest.h (-I..)" \
	grep -qE ' -I\.\. .*module_async\.c' "$logs/build-nokdir"
verify "in-tree build: the cache's kselftest.h is not used" \
	log_lacks "$logs/build-nokdir" 'fetch-source|\.cache/module_async'
verify "in-tree build: with the warnings as errors" \
	grep -q -- '-Wall -Wextra -Werror' "$logs/build-nokdir"
verify "in-tree build without a kernel tree: no test modules" no_modules_in "$suite/modules"

verify "in-tree build with KDIR: make succeeds" run "$logs/build" ksft_make KDIR="$kdir"
verify "in-tree build with KDIR: every test module built for $krel" \
	modules_built_in "$suite/modules"
verify "in-tree build: modules built with KBUILD_EXTMOD, not M=" \
	grep -q 'KBUILD_EXTMOD=.*modules' "$suite/modules/Makefile"
verify "run_tests: the kselftest runner exits 0" \
	run "$logs/run_tests" ksft_make KDIR="$kdir" run_tests
# 6.1's run_tests prints a whole document; 7.2's its result lines alone.
headless=
grep -q 'TAP version' "$selftests/kselftest/runner.sh" || headless=headless
verify "run_tests: $SKIPPED: SKIP '$skip_reason'${headless:+ (a result line alone)}" \
	skipped_in "$logs/run_tests" $headless
if [ -z "$headless" ]; then
	sed -n '/^TAP version 13$/,$p' "$logs/run_tests" >"$logs/run_tests.ktap"
	run_to "$logs/kunit.log" "$KTAP" kunit "$src/tools/testing/kunit/kunit_parser.py" \
		--name run_tests --all-skipped "$logs/run_tests.ktap"
	details=$logs/kunit.log check "run_tests: the kernel's KTAP parser reads it" \
		test "$rc" -eq 0
fi

verify "clean: make succeeds" run "$logs/clean" ksft_make KDIR="$kdir" clean
verify "clean: runner and modules gone" \
	test ! -e "$suite/module_async" -a ! -e "$suite/modules/ma_gate.ko"

o=$out/out
verify "O= build: make succeeds" run "$logs/build-o" ksft_make KDIR="$kdir" O="$o"
verify "O= build: the runner in O=/kselftest/module_async/" \
	test -x "$o/kselftest/module_async/module_async"
verify "O= build: the runner not in the source tree" test ! -e "$suite/module_async"
verify "O= build: the modules beside the runner" \
	modules_built_in "$o/kselftest/module_async/modules"
verify "O= install: make succeeds" \
	run "$logs/install-o" ksft_make KDIR="$kdir" O="$o" install INSTALL_PATH="$o/install"
verify "O= install: the runner installed" test -x "$o/install/module_async/module_async"
verify "O= install: the modules installed" modules_built_in "$o/install/module_async/modules"
ksft_make KDIR="$kdir" clean >/dev/null 2>&1 || true

# The suite leaves the test modules to lib.mk (TEST_GEN_MODS_DIR); an older
# lib.mk (6.1's) is given tools/kernel/lib.mk-mods by ksft-install.sh.
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

if [ "$toplevel" -eq 1 ]; then
	obj=$out/obj
	if [ ! -f "$obj/.config" ]; then
		run "$logs/tinyconfig" make -s -C "$tree" O="$obj" tinyconfig >/dev/null ||
			die "cannot configure $obj"
	fi
	verify "top level: make O=... kselftest TARGETS=module_async KDIR=... exits 0" \
		run "$logs/kselftest" make -j"$(nproc)" -C "$tree" O="$obj" kselftest \
			TARGETS=module_async KDIR="$kdir" ${compat[@]+"${compat[@]}"}
	verify "top level: the modules built for $krel" \
		modules_built_in "$obj/kselftest/module_async/modules"
	verify "top level: $SKIPPED: SKIP '$skip_reason'" skipped_in "$logs/kselftest"
	make -C "$suite" KDIR="$kdir" clean >/dev/null 2>&1 || true
fi

checks_summary
