#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-via.sh - vm.sh --via run_kselftest on Debian's stock kernel and on
# vanilla 7.2: the kernel's KTAP parser reads the runner's document and the
# suite's nested in it (every case once), with the table's verdicts; the
# intrusive cases run in the VM, and skip with --intrusive no.
#
# usage: test-via.sh [--out DIR]   (default: build/check/via)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"

out=$TOP/build/check/via
test_options "$@"
need_cmd python3 awk

src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) || die "could not fetch the source"
kunit=$src/tools/testing/kunit/kunit_parser.py
mkdir -p "$out"
out=$(cd "$out" && pwd)

# via KERNEL VM-ARGS...: the suite on KERNEL (a verdicts column; vm.sh VM-ARGS).
via()
{
	local kernel=$1 dir=$out/$1 status=0

	shift
	mkdir -p "$dir"
	rm -f "$dir/results.ktap" "$dir/nested.ktap"
	"$TOOLS/vm/vm.sh" "$@" --via run_kselftest --out "$dir" >"$dir/stdout.ktap" \
		2>"$dir/vm.log" || status=$?
	# The cases of the runner that ran: the install's.
	"$dir/kselftest/module_async/module_async" --list >"$dir/cases" 2>/dev/null || true
	run_to "$dir/kunit.log" "$KTAP" --nested "$KSFT_TEST" kunit "$kunit" \
		--cases "$dir/cases" "$dir/results.ktap"
	details=$dir/kunit.log check \
		"$kernel: the kernel's KTAP parser reads the runner's document and the suite's" \
		test "$rc" -eq 0
	"$KTAP" --nested "$KSFT_TEST" document "$dir/results.ktap" >"$dir/nested.ktap" \
		2>/dev/null || true
	expect_verdicts "$kernel: the nested document has the expected verdicts and status" \
		"$kernel" "$dir/nested.ktap" "$status" "$dir/compare.log"
}

via stock
via vanilla-7.2 --kernel vanilla --src 7.2
check "stock: run_kselftest's run saw the VM, the intrusive cases ran" \
	grep -q '^# intrusive cases: run, in a virtual machine (' "$out/stock/nested.ktap"

# --intrusive no: the cases that freeze every task or warn skip, saying why.
intrusive=(freeze_during_held_load warn_on_sync_request_from_async)
mkdir -p "$out/intrusive-no"
"$TOOLS/vm/vm.sh" --out "$out/intrusive-no" -- --intrusive no --case "${intrusive[0]}" \
	--case "${intrusive[1]}" >"$out/intrusive-no.ktap" 2>"$out/intrusive-no.log" || true
said='by default in a virtual machine only \(--intrusive yes\)$'
for c in "${intrusive[@]}"; do
	check "--intrusive no: $c skips, saying what it does and --intrusive yes" \
		grep -Eq "^# $c: SKIP it .*: $said" "$out/intrusive-no.ktap"
done

checks_summary
