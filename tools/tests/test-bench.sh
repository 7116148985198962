#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-bench.sh - tools/bench --quick --against HEAD prints its table (the
# lines table_problem reads, their figures numbers: the latency and storm
# rows, the floor, make vm); bad usage is exit 2.
#
# usage: test-bench.sh [--out DIR]   (default: build/check/bench)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
out=$TOP/build/check/bench
test_options "$@"

# table_problem FILE [REV]: why FILE is no table of bench (--against REV).
table_problem()
{
	local n='[0-9]+(\.[0-9]+)?' re fig

	fig=" +$n +$n +$n +$n( |$)"	# median, min, max and ratio
	for re in '^module_async bench, .*, [0-9]+ run\(s\)' "^floor stock .*$fig" \
		  "^make vm \(warm\) stock$fig" "^  the VM run .*$fig" \
		  "^latency .* job\(s\) held$fig" "^storm .* 32 load\(s\) at once$fig" \
		  ${2:+"^make vm \(warm\) stock at $2$fig this tree / $2: $n$"} \
		  ${2:+"^  the VM run .*$fig this tree / $2: $n$"}; do
		grep -Eq -- "$re" "$1" || { echo "no line /${re%% +\[0-9\]*}/"; return; }
	done
}

# The reader can fail: tools/README's table taken, one with a line missing or mangled not.
sed -n '/^    module_async bench, /,$s/^    //p' "$TOOLS/README" >"$tmp/good"
verify "the reader takes tools/README's table" [ -z "$(table_problem "$tmp/good")" ]
for mangle in '/^make vm (warm)/s/ [0-9.]*$/ -/' '/^  the VM run/d' \
	      '/^floor stock /s/1\.00/ - /' '1d' '/^latency /d' \
	      '/^latency /s/\(held *\)[0-9][0-9.]*/\1-/' '/^storm /d'; do
	sed "$mangle" "$tmp/good" >"$tmp/bad"
	verify "the reader refuses a table after '$mangle': $(table_problem "$tmp/bad")" \
		[ -n "$(table_problem "$tmp/bad")" ]
done
verify "the reader refuses a table without --against's rows" \
	[ -n "$(table_problem "$tmp/good" HEAD)" ]

for bad_use in "--runs x:--runs wants a whole number" "--quick --latency:--quick or --latency" \
	       "--against no/such:--against wants a commit"; do
	# shellcheck disable=SC2086 # the options, one word each
	run_to "$out.usage" "$TOOLS/bench" ${bad_use%%:*}
	grep -qF -- "${bad_use#*:}" "$out.usage" || rc="$rc, not saying it"
	verify "bench ${bad_use%%:*}: exit 2, saying '${bad_use#*:}' (exit $rc)" [ "$rc" = 2 ]
done

run_to "$out.table" "$TOOLS/bench" --quick --against HEAD --out "$out"
problem=$(table_problem "$out.table" HEAD)
[ "$rc" = 0 ] || problem="exit $rc"
verify "bench --quick --against HEAD: ${problem:-its table, $(grep -o 'this tree / .*' \
	"$out.table" | paste -sd ';')}" [ -z "$problem" ]
cat "$out.table"
checks_summary
