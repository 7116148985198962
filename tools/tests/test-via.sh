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
kernel and on linux-source-7.2 built vanilla, and checks its KTAP; ends
with "N passed, N failed".

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
	if [ "$rc" -eq "$(sed -n 's/^status //p' "$dir/expected")" ]; then
		pass "$kernel: vm.sh --via run_kselftest exits $rc"
	else
		quote "$dir/vm.log"
		fail "$kernel: vm.sh --via run_kselftest exits as the table says: $rc ($dir/vm.log)"
	fi

	# The cases of the runner that ran: the one in the install.
	cases=$dir/cases
	runner=$dir/kselftest/module_async/module_async
	what="$kernel: the kernel's KTAP parser reads the runner's document and the suite's in it"
	if [ -f "$dir/results.ktap" ] && "$runner" --list >"$cases" 2>/dev/null &&
		[ -s "$cases" ] &&
		"$TOOLS/ktap/ktap-check.py" --kunit "$src/tools/testing/kunit" --cases "$cases" \
			--nested "$HEADER" "$dir/results.ktap" >"$dir/ktap-check.log" 2>&1; then
		pass "$what"
	else
		[ ! -f "$dir/ktap-check.log" ] ||
			grep -v '^PASS' "$dir/ktap-check.log" | sed 's/^/# /'
		fail "$what"
	fi

	# The nested document, without its "# " prefix.
	if [ -f "$dir/results.ktap" ]; then
		"$TOOLS/ktap/ktap" --nested "$HEADER" document "$dir/results.ktap" \
			>"$dir/nested.ktap"
	fi
	if [ -s "$dir/nested.ktap" ] &&
		"$TOOLS/expected/expected" compare --status "$rc" "$kernel" "$dir/nested.ktap" \
			>"$dir/compare.log" 2>&1; then
		pass "$kernel: the nested document has the expected verdicts"
	else
		[ ! -f "$dir/compare.log" ] || sed 's/^/# /' "$dir/compare.log"
		fail "$kernel: the nested document has the expected verdicts (in ${dir#"$TOP"/})"
	fi
}

via stock
via vanilla-7.2 --kernel vanilla --src 7.2

# make vm's own run on the same 7.2 kernel: the same verdicts, case by case.
direct=$out/vanilla-7.2-direct
mkdir -p "$direct"
rm -f "$direct/results.ktap"
"$TOOLS/vm/vm.sh" --kernel vanilla --src 7.2 --out "$direct" >/dev/null 2>"$direct/vm.log" || true
if [ -s "$direct/results.ktap" ] && [ -s "$out/vanilla-7.2/nested.ktap" ] &&
	"$TOOLS/ktap/ktap" verdicts "$direct/results.ktap" >"$direct/verdicts" &&
	"$TOOLS/ktap/ktap" verdicts "$out/vanilla-7.2/nested.ktap" >"$out/vanilla-7.2/verdicts" &&
	diff "$direct/verdicts" "$out/vanilla-7.2/verdicts" >"$direct/diff"; then
	pass "vanilla-7.2: run_kselftest.sh's verdicts are make vm's, case by case"
else
	[ ! -f "$direct/diff" ] || sed 's/^/# /' "$direct/diff"
	fail "vanilla-7.2: run_kselftest.sh's verdicts are make vm's (logs: ${direct#"$TOP"/})"
fi

checks_summary
