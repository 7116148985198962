#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-via.sh - the suite run the kselftest way in the VM: the kselftest
# install (tools/vm/ksft-install.sh: make series applied to the kernel's
# source tree, built with the kernel's build as KDIR, make install) booted by
#   tools/vm/vm.sh --via run_kselftest
# whose guest runs "run_kselftest.sh -c module_async" under settings'
# timeout. On Debian's stock kernel and on linux-source-7.2 built vanilla
# (the series applied to that very tree) it checks that the run exits as
# the table says, that the kernel's KTAP parser reads the kselftest
# runner's document and the suite's nested in it with every case once
# (tools/ktap/ktap-check.py --nested), and that the nested document, taken
# out of the runner's by the KTAP reader (tools/ktap/ktap --nested), has
# the kernel's verdicts of tools/expected/verdicts
# (tools/expected/expected compare); on 7.2, also that they are, case by
# case, those of make vm's own run on that kernel (vm.sh, run directly).
#
# usage: test-via.sh [--out DIR]   (default: build/check/via)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"

out=$TOP/build/check/via
test_options "$@"
need_cmd python3 awk

src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) || die "could not fetch the source"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# via KERNEL VM-ARGS...: the suite by run_kselftest.sh on KERNEL (a column
# of tools/expected/verdicts, made by vm.sh VM-ARGS), in $out/KERNEL;
# its nested document in $out/KERNEL/nested.ktap.
via()
{
	local kernel=$1 dir=$out/$1 rc=0 cases runner what

	shift
	mkdir -p "$dir"
	rm -f "$dir/results.ktap" "$dir/nested.ktap"
	"$TOOLS/vm/vm.sh" "$@" --via run_kselftest --out "$dir" >"$dir/stdout.ktap" \
		2>"$dir/vm.log" || rc=$?
	"$TOOLS/expected/expected" column "$kernel" >"$dir/expected"
	details=$dir/vm.log check \
		"$kernel: vm.sh --via run_kselftest exits as the table says ($rc)" \
		test "$rc" -eq "$(sed -n 's/^status //p' "$dir/expected")"

	# The cases of the runner that ran: the one in the install.
	cases=$dir/cases
	runner=$dir/kselftest/module_async/module_async
	what="$kernel: the kernel's KTAP parser reads the runner's document and the suite's in it"
	if [ -f "$dir/results.ktap" ] && "$runner" --list >"$cases" 2>/dev/null &&
		[ -s "$cases" ] &&
		"$TOOLS/ktap/ktap-check.py" --kunit "$src/tools/testing/kunit" --cases "$cases" \
			--nested "$KSFT_TEST" "$dir/results.ktap" >"$dir/ktap-check.log" 2>&1; then
		pass "$what"
	else
		fail "$what"
		[ ! -f "$dir/ktap-check.log" ] ||
			"$TOOLS/ktap/ktap" totals "$dir/ktap-check.log" | sed '$d; s/^/# /' || true
	fi

	# The nested document, without its "# " prefix.
	if [ -f "$dir/results.ktap" ]; then
		"$KTAP" --nested "$KSFT_TEST" document "$dir/results.ktap" \
			>"$dir/nested.ktap"
	fi
	if [ -s "$dir/nested.ktap" ] &&
		"$TOOLS/expected/expected" compare --status "$rc" "$kernel" "$dir/nested.ktap" \
			>"$dir/compare.log" 2>&1; then
		pass "$kernel: the nested document has the expected verdicts"
	else
		fail "$kernel: the nested document has the expected verdicts (in ${dir#"$TOP"/})"
		[ ! -f "$dir/compare.log" ] ||
			"$TOOLS/ktap/ktap" totals "$dir/compare.log" | sed '$d; s/^/# /' || true
	fi
}

via stock
via vanilla-7.2 --kernel vanilla --src 7.2

# make vm's own run on the same 7.2 kernel: the same verdicts, case by case.
direct=$out/vanilla-7.2-direct
mkdir -p "$direct"
rm -f "$direct/results.ktap"
"$TOOLS/vm/vm.sh" --kernel vanilla --src 7.2 --out "$direct" >/dev/null 2>"$direct/vm.log" || true
"$KTAP" verdicts "$direct/results.ktap" >"$direct/verdicts" 2>/dev/null || true
"$KTAP" verdicts "$out/vanilla-7.2/nested.ktap" >"$out/vanilla-7.2/verdicts" 2>/dev/null || true
diff "$direct/verdicts" "$out/vanilla-7.2/verdicts" >"$tmp/err" || true
check "vanilla-7.2: run_kselftest.sh's verdicts are make vm's, case by case" \
	test -s "$direct/verdicts" -a ! -s "$tmp/err"

checks_summary
