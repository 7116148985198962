#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-bench.sh - tools/bench --quick --against HEAD (one run each, the
# stock kernel only) prints its table: the header line; the floor's, a warm
# make vm's, HEAD's make vm's and the latency row with their figures and
# ratio; "ratio suite/floor: X", "ratio make-vm/floor: X" and each at HEAD,
# X a number.  The table's reader refuses tables that lack one of these; bad
# usage is exit 2.  Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	echo "Usage: $PROG [--out DIR] [--help]"
	echo "Runs tools/bench --quick --against HEAD (logs in DIR, default" \
		"build/check/bench) and checks its table."
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

# table_problem FILE [REV]: why FILE is no table of tools/bench (of
# --against REV with REV; nothing if it is).
table_problem()
{
	local what line ratio

	grep -q '^module_async bench, .*, [0-9]* run(s)' "$1" || { echo "no header line"; return; }
	for what in "floor stock " "make vm (warm) stock${2:+ at $2}" "  the VM run " \
		    "latency .* job(s) held "; do
		# What, then its median, min, max and ratio: numbers.
		line=$(grep -m 1 "^$what" "$1") || { echo "no row '$what'"; return; }
		[[ $line =~ \ ($NUM)\ +($NUM)\ +($NUM)\ +($NUM)(\ |$) ]] ||
			{ echo "no figures and ratio in '$line'"; return; }
	done
	for ratio in suite/floor make-vm/floor; do
		grep -Eq "^ratio $ratio: $NUM$" "$1" ||
			{ echo "no line 'ratio $ratio: X'"; return; }
		[ -z "${2:-}" ] ||
			grep -Eq "^ratio $ratio at $2: $NUM \(this tree / $2: $NUM\)$" "$1" ||
			{ echo "no line 'ratio $ratio at $2: X (this tree / $2: X)'"; return; }
	done
}

# The reader can fail: tools/README's table taken, tables with a row, a
# ratio or the header missing or not numbers refused.
good=$(mktemp)
bad=$(mktemp)
trap 'rm -f "$good" "$bad"' EXIT
sed -n '/^    module_async bench, /,/^    ratio make-vm\/floor: /s/^    //p' \
	"$TOOLS/README" >"$good"
verify "the reader takes tools/README's table" [ -z "$(table_problem "$good")" ]
for mangle in 's/^ratio suite\/floor: .*/ratio suite\/floor: -/' '/^ratio make-vm/d' \
	      '/^floor stock /s/1\.00/ - /' '1d' '/^latency /d' \
	      '/^latency /s/\(held *\)[0-9][0-9.]*/\1-/'; do
	sed "$mangle" "$good" >"$bad"
	verify "the reader refuses a table after '$mangle': $(table_problem "$bad")" \
		[ -n "$(table_problem "$bad")" ]
done
verify "the reader refuses a table without --against's rows" \
	[ -n "$(table_problem "$good" HEAD)" ]

for bad_use in "--runs x:--runs wants a whole number" "--quick --latency:--quick or --latency" \
	       "--against no/such:--against wants a commit"; do
	rc=0
	# shellcheck disable=SC2086 # the options, one word each
	"$TOOLS/bench" ${bad_use%%:*} >"$out.usage" 2>&1 || rc=$?
	grep -qF -- "${bad_use#*:}" "$out.usage" || rc="$rc, not saying it"
	verify "bench ${bad_use%%:*}: exit 2, saying '${bad_use#*:}' (exit $rc)" [ "$rc" = 2 ]
done

rc=0
"$TOOLS/bench" --quick --against HEAD --out "$out" >"$out.table" || rc=$?
problem=$(table_problem "$out.table" HEAD)
[ "$rc" = 0 ] || problem="exit $rc"
verify "bench --quick --against HEAD: ${problem:-its table, $(grep '^ratio ' "$out.table" |
	paste -sd ';')}" [ -z "$problem" ]
cat "$out.table"
checks_summary
