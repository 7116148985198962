#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-via.sh - the suite run the kselftest way in the VM: the kselftest
# install (tools/vm/ksft-install.sh) booted by
#   tools/vm/vm.sh --via run_kselftest
# whose guest runs "run_kselftest.sh -c module_async" under settings'
# timeout. Checks that the run exits 0 on Debian's stock kernel, that the
# kernel's KTAP parser reads the kselftest runner's document and the
# suite's nested in it with every case once (tools/ktap/ktap-check.py
# --nested), and that the nested document, taken out of the runner's by
# the KTAP reader (tools/ktap/ktap --nested), has the stock kernel's
# verdicts of tools/expected/verdicts (tools/ktap/compare-verdicts.sh).
#
# One PASS/FAIL line per check, then "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

readonly HEADER='selftests: module_async: module_async.sh'

usage()
{
	cat <<EOF
Usage: $PROG [--out DIR]

Runs the suite in the VM by run_kselftest.sh -c module_async on the stock
kernel and checks its KTAP; ends with "N passed, N failed".

  --out DIR    where the run goes (default: build/check/via)
  -h, --help   this text
EOF
}

out=$TOP/build/check/via
while [ $# -gt 0 ]; do
	case $1 in
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
need_cmd python3 awk

# quote FILE: its last lines as diagnostics.
quote()
{
	tail -n 30 "$1" | sed 's/^/# /'
}

src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) || die "could not fetch the source"
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/vm.log
results=$out/results.ktap
nested=$out/nested.ktap
rm -f "$results" "$nested"

rc=0
"$TOOLS/vm/vm.sh" --via run_kselftest --out "$out" >"$out/stdout.ktap" 2>"$log" || rc=$?
if [ "$rc" -eq 0 ]; then
	pass "vm.sh --via run_kselftest exits 0"
else
	quote "$log"
	fail "vm.sh --via run_kselftest exits 0: exit $rc (log: $log)"
fi

# The cases of the runner that ran: the one in the install.
cases=$out/cases
runner=$out/kselftest/module_async/module_async
if [ -f "$results" ] && "$runner" --list >"$cases" 2>/dev/null && [ -s "$cases" ] &&
	"$TOOLS/ktap/ktap-check.py" --kunit "$src/tools/testing/kunit" --cases "$cases" \
		--nested "$HEADER" "$results" >"$out/ktap-check.log" 2>&1; then
	pass "the kernel's KTAP parser reads the runner's document and the suite's nested in it"
else
	[ ! -f "$out/ktap-check.log" ] || grep -v '^PASS' "$out/ktap-check.log" | sed 's/^/# /'
	fail "the kernel's KTAP parser reads the runner's document and the suite's nested in it"
fi

# The nested document, without its "# " prefix.
if [ -f "$results" ]; then
	"$TOOLS/ktap/ktap" --nested "$HEADER" document "$results" >"$nested"
fi
"$TOOLS/expected/expected.sh" column stock >"$out/expected"
if [ -s "$nested" ] &&
	"$TOOLS/ktap/compare-verdicts.sh" --status "$rc" "$nested" "$out/expected" \
		>"$out/compare.log" 2>&1; then
	pass "the nested document has the stock kernel's expected verdicts"
else
	[ ! -f "$out/compare.log" ] || grep -v '^PASS' "$out/compare.log" | sed 's/^/# /'
	fail "the nested document has the stock kernel's expected verdicts (${nested#"$TOP"/})"
fi

checks_summary
