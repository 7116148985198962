#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-bench.sh - tools/bench --quick (one run each, the stock kernel only)
# prints its table: the header line, the floor's and a warm make vm's rows
# with numbers, "ratio suite/floor: X" and "ratio make-vm/floor: X" with X
# a number, and its latency row (a load beside held async jobs) with its
# numbers; the table's reader refuses tables that lack one of these; bad
# usage is exit 2.  Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	echo "Usage: $PROG [--out DIR] [--help]"
	echo "Runs tools/bench --quick (logs in DIR, default build/check/bench)" \
		"and checks its table."
}

out=$TOP/build/check/bench
while [ $# -gt 0 ]; do
	case $1 in
	--out) need_arg "$1" $#; out=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

readonly NUM='[0-9]+(\.[0-9]+)?'

# table_problem FILE: why FILE is no table of tools/bench (nothing if it is).
table_problem()
{
	local what line ratio

	grep -q '^module_async bench, .*, [0-9]* run(s)' "$1" || { echo "no header line"; return; }
	for what in "floor stock " "make vm (warm) stock" "  the VM run "; do
		# What, then its median, min, max and ratio: numbers.
		line=$(awk -v w="$what" 'index($0, w) == 1 { print; exit }' "$1")
		[[ $line =~ \ ($NUM)\ +($NUM)\ +($NUM)\ +($NUM)(\ |$) ]] ||
			{ echo "no row '$what' with its figures and ratio"; return; }
	done
	for ratio in suite/floor make-vm/floor; do
		grep -Eq "^ratio $ratio: $NUM$" "$1" ||
			{ echo "no line 'ratio $ratio: X'"; return; }
	done
}

# latency_problem FILE: why FILE has no latency row with its figures and
# ratio (nothing if it has).  tools/README's table is older than the row:
# checked apart.
latency_problem()
{
	local line

	line=$(grep -m 1 '^latency .* job(s) held ' "$1") || { echo "no latency row"; return; }
	[[ $line =~ \ ($NUM)\ +($NUM)\ +($NUM)\ +($NUM)(\ |$) ]] ||
		echo "no figures and ratio in '$line'"
}

# The reader can fail: tools/README's table taken, tables with a row, a ratio or
# the header missing or not numbers refused.
good=$(mktemp)
bad=$(mktemp)
trap 'rm -f "$good" "$bad"' EXIT
sed -n '/^    module_async bench, /,/^    ratio make-vm\/floor: /s/^    //p' \
	"$TOOLS/README" >"$good"
if [ -z "$(table_problem "$good")" ]; then
	pass "the reader takes tools/README's table"
else
	fail "the reader refuses tools/README's table: $(table_problem "$good")"
fi
for mangle in 's/^ratio suite\/floor: .*/ratio suite\/floor: -/' '/^ratio make-vm/d' \
	      '/^floor stock /s/1\.00/ - /' '1d'; do
	sed "$mangle" "$good" >"$bad"
	if [ -n "$(table_problem "$bad")" ]; then
		pass "the reader refuses a table after '$mangle': $(table_problem "$bad")"
	else
		fail "the reader takes a table after '$mangle'"
	fi
done

rc=0
"$TOOLS/bench" --runs x >/dev/null 2>&1 || rc=$?
if [ "$rc" = 2 ]; then
	pass "bench --runs x: usage error"
else
	fail "bench --runs x: exit $rc, not 2"
fi
rc=0
"$TOOLS/bench" --quick --latency >"$out.both" 2>&1 || rc=$?
if [ "$rc" = 2 ] && grep -q -- '--quick or --latency' "$out.both"; then
	pass "bench --quick --latency: usage error, one or the other"
else
	fail "bench --quick --latency: exit $rc (see $out.both)"
fi

rc=0
"$TOOLS/bench" --quick --out "$out" >"$out.table" || rc=$?
if [ "$rc" != 0 ]; then
	fail "bench --quick: exit $rc"
elif [ -n "$(table_problem "$out.table")" ]; then
	fail "bench --quick: $(table_problem "$out.table")"
else
	pass "bench --quick: its table, ratios $(sed -n 's/^ratio //p' "$out.table" | tr '\n' ' ')"
fi
if [ -n "$(latency_problem "$out.table")" ]; then
	fail "bench --quick: $(latency_problem "$out.table")"
else
	pass "bench --quick: $(grep -m 1 '^latency ' "$out.table" | tr -s ' ')"
fi
# The latency row's check can fail: the row gone, its figures not numbers.
for mangle in '/^latency /d' '/^latency /s/\(held *\)[0-9][0-9.]*/\1-/'; do
	sed "$mangle" "$out.table" >"$bad"
	if [ -n "$(latency_problem "$bad")" ]; then
		pass "the latency check refuses a table after '$mangle'"
	else
		fail "the latency check takes a table after '$mangle'"
	fi
done
cat "$out.table"
checks_summary
