#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-deadlock.sh - the suite with deadlocks allowed (resumed in fresh
# boots) on $deadlock_kernels, each within its bound: the expected verdicts,
# each TIMEOUT's evidence, each wedged boot's report, the KernelCI IDs and
# a lab's reading of the console.  On stock 6.1 also --facts that cannot lie.
#
# usage: test-deadlock.sh [--out DIR]   (default: build/check/deadlock)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
shopt -s nullglob	# a run of one boot has no boot-*.ktap

# 6.1, 5.10 and 7.2 (the oldest and newest WARN, elevator and workqueue
# formats), the 3.8 flag on 6.1 and 7.2, the fixed series on 6.1 (on 7.2 its
# deadlock's modprobe is not yet seen waiting: no cycle).
readonly deadlock_kernels="stock stock-bullseye stock-sid patched patched-7.2 fixed"
readonly bound=600	# a kernel's whole run, not its fetch or build

out=$TOP/build/check/deadlock
test_options "$@"

# timeouts_show KERNEL DOC REGEX WHAT: DOC has TIMEOUTs, each one's evidence matching REGEX.
timeouts_show()
{
	local all name bare=''

	all=$("$KTAP" verdicts "$2" | awk '$NF == "timeout" { print $2 }')
	for name in $all; do
		# grep reads it all: a -q that stops early could kill the
		# reader with SIGPIPE, a false "no match" under pipefail.
		"$KTAP" diag "$name" "$2" | grep -E -- "$3" >/dev/null || bare+=" $name"
	done
	echo "without $4:${bare:- none}" >"$tmp/err"
	check "$1: each of $(wc -w <<<"$all") TIMEOUTs shows $4" test -n "$all" -a -z "$bare"
}

# lab_misfiled CONSOLE DOC: each "<id> <result>" KernelCI's parser reads in
# CONSOLE not as DOC has it: no such case, another verdict, or twice.
lab_misfiled()
{
	local ids

	ids=$("$KTAP" kernelci-ids "$1") || ids=''
	if [ -z "$ids" ]; then
		echo "(no KernelCI IDs read from $1)"
		return 0
	fi
	"$KTAP" verdicts "$2" | lab_results |
		awk 'NR == FNR { want[$1] = $2; next }
		     !($1 in want) || want[$1] != $2 || seen[$1]++ { print }' - <(echo "$ids")
}

# A case that deadlocks on stock 6.1, and facts that would call it safe.
readonly unsafe_case=request_module_from_async_kyber-iosched
readonly false_facts=own=yes,worker=yes,unrelated=no,older=no,async_probe=no,async_probe_knob=yes

# facts_check: false --facts, without --allow-deadlock (the case measured, skipped, nothing
# wedged) and with it (measured all the same, the difference said).
facts_check()
{
	local dir=$out/stock-facts verdict ok=false differ

	rm -rf "$dir"
	run_to "$out.stock.facts.log" "$TOOLS/vm/vm.sh" --kernel stock --out "$dir" -- \
		--facts "$false_facts" --case "$unsafe_case"
	verdict=$("$KTAP" verdict "$unsafe_case" "$dir/results.ktap" 2>/dev/null) || verdict=''
	[ "$rc" -ne 4 ] || [ "$verdict" != skip ] ||
		! grep -q "^# $unsafe_case: SKIP would deadlock" "$dir/results.ktap" ||
		grep -q '^# kernel wedged by' "$dir/results.ktap" || ok=true
	details=$out.stock.facts.log check \
		"stock: --facts calling $unsafe_case safe: skipped without --allow-deadlock" "$ok"
	# With it too they are measured: a safe case that the false facts
	# would pass skips, its kernel's policy named.
	dir=$out/stock-facts-allowed ok=false differ='unrelated=no, measured yes'
	rm -rf "$dir"
	run_to "$out.stock.facts-allowed.log" "$TOOLS/vm/vm.sh" --kernel stock --out "$dir" \
		--allow-deadlock -- --facts "$false_facts" --case plain_load_skips_unrelated_async
	verdict=$("$KTAP" verdict plain_load_skips_unrelated_async "$dir/results.ktap" \
		2>/dev/null) || verdict=''
	[ "$rc" -ne 4 ] || [ "$verdict" != skip ] ||
		[ "$("$KTAP" policy "$dir/results.ktap")" != always-sync ] ||
		! grep -q "^# --facts differ from this boot's, which stand: .*$differ" \
			"$dir/results.ktap" || ok=true
	details=$out.stock.facts-allowed.log check \
		"stock: false --facts with --allow-deadlock: measured, said, always-sync" "$ok"
}

# prepare_kernel NAME: NAME fetched or built, outside the run's bound.
prepare_kernel()
{
	case $1 in
	stock) "$TOOLS/kernel/fetch-kernel.sh" --dist bookworm ;;
	stock-*) "$TOOLS/kernel/fetch-kernel.sh" --dist "${1#stock-}" ;;
	*-*) "$TOOLS/kernel/build-kernel.sh" --variant "${1%%-*}" --src "${1#*-}" ;;
	*) "$TOOLS/kernel/build-kernel.sh" --variant "$1" ;;
	esac
}

makeable=$("$TOOLS/vm/matrix.sh" --list)
mkdir -p "$out"
for k in $deadlock_kernels; do
	if ! grep -qxF "$k" <<<"$makeable"; then
		log "$k left out: tools/vm/matrix.sh cannot make it"
		continue
	fi
	run_to "$out.$k.prepare.log" prepare_kernel "$k"
	[ "$rc" -eq 0 ] || fail "$k: could not fetch or build the kernel (see $out.$k.prepare.log)"
	start=$(date +%s)
	run_to "$out.$k.log" "$TOOLS/vm/matrix.sh" --kernel "$k" --allow-deadlock --out "$out"
	took=$(($(date +%s) - start))
	sed -n 's/^matrix: /    verdicts: /p; /^#   /p' "$out.$k.log"
	verify "$k: every verdict as in tools/expected/verdicts, deadlocks allowed" \
		test "$rc" -eq 0
	verify "$k: whole run took ${took}s, bound ${bound}s" test "$took" -le "$bound"
	doc=$out/$k/results.ktap
	timeouts_show "$k" "$doc" async_synchronize "a stack in async_synchronize"
	timeouts_show "$k" "$doc" '^# wait-for cycle: async job ' "the wait-for cycle"
	nwedged=$(grep -c '^# kernel wedged by ' "$doc" 2>/dev/null) || nwedged=0
	ncleanup=$(grep -c '^# cleanup: ' "$doc" 2>/dev/null) || ncleanup=0
	lost=$(grep -m1 'no end marker' "$out/$k/vm.log") || lost=''
	echo "$ncleanup cleanup reports; ${lost:-every end marker arrived}" >"$tmp/err"
	check "$k: each of $nwedged wedged boots sent its cleanup report and end marker" \
		test -s "$doc" -a -z "$lost" -a "$ncleanup" -ge "$nwedged"
	# A boot a wedge cut short ends "Bail out!"; the document of them all, its
	# every case run, does not.
	short=0 bailed=0
	for b in "$out/$k"/boot-*.ktap; do
		grep -q ': not run: kernel wedged by ' "$b" 2>/dev/null || continue
		short=$((short + 1))
		! grep -q '^Bail out! kernel wedged by ' "$b" || bailed=$((bailed + 1))
	done
	left=$(grep -c '^Bail out!' "$doc" 2>/dev/null) || left=0
	echo "$bailed of $short bailed out; $left in the whole document" >"$tmp/err"
	check "$k: each of $short boots a wedge cut short bailed out, the whole document not" \
		test -s "$doc" -a "$bailed" -eq "$short" -a "$left" -eq 0
	# Each boot's document, as a lab without the resume keeps it.
	"$TOP/build/module_async" --list >"$tmp/cases"
	"$KTAP" kernelci-ids --foreign "$tmp/cases" "$doc" "$out/$k"/boot-*.ktap \
		>"$tmp/err" || echo "(the KTAP reader failed)" >>"$tmp/err"
	check "$k: every result of every boot keeps its case's KernelCI ID" \
		test -s "$doc" -a ! -s "$tmp/err"
	lab_misfiled "$out/$k/console.log" "$doc" >"$tmp/err" || true
	check "$k: a lab reading the whole console files each case once, its verdict right" \
		test -s "$out/$k/console.log" -a ! -s "$tmp/err"
done
! grep -qxF stock <<<"$makeable" || facts_check

checks_summary
