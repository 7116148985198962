#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-deadlock.sh - the suite with deadlocks allowed, on one kernel of each
# generation that shows something of its own (see $deadlock_kernels): the
# verdict matrix against tools/expected/verdicts, deadlocks allowed (every
# unsafe case a TIMEOUT, every safe case its usual verdict, one well-formed
# document per kernel although the run took several boots), each TIMEOUT
# backed by a stack that shows the wait in async_synchronize* and by the
# wait-for cycle the runner found, every boot's results under their cases'
# KernelCI IDs, the whole console (every boot) filed by a lab with no
# wrong verdict, each wedged boot's cleanup report and end marker received,
# and each kernel's whole run within its bound. On stock 6.1 also the
# bounds that cannot lie (bounds_checks).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly ktap=$TOOLS/ktap/ktap
readonly matrix=$TOOLS/vm/matrix.sh

# The kernels by default: bookworm's 6.1 (the reference), bullseye's 5.10
# and sid's 7.2 (the oldest and newest WARN, elevator and workqueue
# formats), the 3.8 flag on 6.1 and on 7.2, the fixed series on 6.1 (the
# one deadlock it leaves; on 7.2 too, but there the modprobe of that case
# is not yet seen waiting for the load, so its TIMEOUT lacks the cycle).
# vanilla is 6.1's code as stock, and 6.12 sits between 6.1 and 7.2 in
# every format; the safe matrix covers them.
readonly deadlock_kernels="stock stock-bullseye stock-sid patched patched-7.2 fixed"

usage()
{
	cat <<EOF
usage: $PROG [--kernel NAME]... [--out DIR] [--bound SECONDS]

  --kernel NAME    a kernel of tools/expected/verdicts (repeatable; default:
                   those of $deadlock_kernels that tools/vm/matrix.sh can
                   make)
  --out DIR        results go to DIR/<kernel>/ (default: build/check/deadlock)
  --bound SECONDS  bound on each kernel's whole run, not counting the
                   kernel's fetch or build (default: 600)
EOF
}

out=$TOP/build/check/deadlock
bound=600
kernels=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) need_arg "$1" $#; kernels+=("$2"); shift ;;
	--out) need_arg "$1" $#; out=$2; shift ;;
	--bound)
		bound=${2:-}
		case "$bound" in
		'' | *[!0-9]*) usage_error "--bound wants whole seconds, not '$bound'" ;;
		esac
		shift
		;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done

# The TIMEOUT cases of a document, one a line.
timeouts()
{
	"$ktap" verdicts "$1" | awk '$NF == "timeout" { print $2 }'
}

# Print the names of the TIMEOUT cases of a document whose evidence (the
# '#' lines before its result) shows no async_synchronize frame.
timeouts_without_evidence()
{
	local name evidence

	timeouts "$1" | while read -r name; do
		evidence=$("$ktap" diag "$name" "$1")
		grep -q async_synchronize <<<"$evidence" || echo "$name"
	done
}

# Print the names of the TIMEOUT cases of a document whose evidence has no
# wait-for cycle: the runner's "wait-for cycle: async job ..." line, from
# the stuck tasks' stacks (not its "wait-for cycle: none seen: ...").
timeouts_without_cycle()
{
	local name

	timeouts "$1" | while read -r name; do
		# grep reads it all: a -q that stops early could kill the
		# reader with SIGPIPE, a false "no cycle" under pipefail.
		"$ktap" diag "$name" "$1" |
			grep '^# wait-for cycle: async job ' >/dev/null ||
			echo "$name"
	done
}

# lab_misfiled CONSOLE DOC: the results a lab reading the run's whole
# console (every boot's document as it went by) files wrongly, by
# KernelCI's parser (tools/ktap/ktap kernelci-ids, an XFAIL a pass):
# "<id> <result>" of each ID
# that is not a case of DOC (the merged document) or holds another verdict
# than the case's there, and a case filed twice.  A wedged boot gives no
# result for the cases it did not run, so each case is filed once, by the
# boot that ran it.
lab_misfiled()
{
	local ids

	ids=$("$ktap" kernelci-ids "$1") || ids=''
	if [ -z "$ids" ]; then
		echo "(no KernelCI IDs read from $1)"
		return 0
	fi
	# shellcheck disable=SC2016 # awk, not shell
	"$ktap" verdicts "$2" |
		awk '{ print $2, $3 == "ok" || $3 == "xfail" ? "pass" :
				 $3 == "skip" ? "skip" : "fail" }' |
		awk 'NR == FNR { want[$1] = $2; next }
		     !($1 in want) || want[$1] != $2 || seen[$1]++ { print }' - <(echo "$ids")
}

# The case the bounds checks run: unsafe where a load syncs all async work.
readonly unsafe_case=request_module_from_async_kyber-iosched
# Facts that would call it safe on stock 6.1, where it deadlocks.
readonly false_facts=own=yes,worker=yes,unrelated=no,older=no,async_probe=no,async_probe_knob=yes

# Bounds that cannot lie, on stock 6.1: a --timeout-ms below the floor is
# refused before any boot (exit 2, the floor named); --facts that call an
# unsafe case safe do not run it without --allow-deadlock: the boot
# measures the facts and skips the case (exit 4), nothing wedged.
bounds_checks()
{
	local dir=$out/stock-floor rc=0 verdict

	rm -rf "$dir"
	"$TOOLS/vm/vm.sh" --kernel stock --out "$dir" -- --timeout-ms 10 \
		>"$out.stock.floor.log" 2>&1 || rc=$?
	if [ $rc -eq 2 ] && grep -q 'bad --timeout-ms: 10 (1000 to ' "$out.stock.floor.log" &&
	   ! [ -e "$dir/results.ktap" ]; then
		pass "stock: --timeout-ms 10 refused before any boot, exit 2, the floor named"
	else
		fail "stock: --timeout-ms 10: exit $rc (see $out.stock.floor.log)"
	fi
	rc=0 dir=$out/stock-facts
	rm -rf "$dir"
	"$TOOLS/vm/vm.sh" --kernel stock --out "$dir" -- --facts "$false_facts" \
		--case "$unsafe_case" >"$out.stock.facts.log" 2>&1 || rc=$?
	verdict=$("$ktap" verdicts "$dir/results.ktap" 2>/dev/null |
		awk -v c="$unsafe_case" '$2 == c { print $NF }') || verdict=''
	if [ $rc -eq 4 ] && [ "$verdict" = skip ] &&
	   grep -q "^# $unsafe_case: SKIP would deadlock" "$dir/results.ktap" &&
	   ! grep -q '^# kernel wedged by' "$dir/results.ktap"; then
		pass "stock: --facts calling $unsafe_case safe: skipped without --allow-deadlock"
	else
		fail "stock: --facts without --allow-deadlock: exit $rc," \
			"$unsafe_case ${verdict:-no verdict} (see $out.stock.facts.log)"
	fi
}

# prepare_kernel NAME: fetch or build the kernel NAME of the table, so that
# the bound is on the run alone.
prepare_kernel()
{
	case $1 in
	stock) "$TOOLS/kernel/fetch-kernel.sh" --dist bookworm ;;
	stock-*) "$TOOLS/kernel/fetch-kernel.sh" --dist "${1#stock-}" ;;
	*-*) "$TOOLS/kernel/build-kernel.sh" --variant "${1%%-*}" --src "${1#*-}" ;;
	*) "$TOOLS/kernel/build-kernel.sh" --variant "$1" ;;
	esac
}

if [ ${#kernels[@]} -eq 0 ]; then
	makeable=$("$matrix" --list)
	for k in $deadlock_kernels; do
		if grep -qxF "$k" <<<"$makeable"; then
			kernels+=("$k")
		else
			log "$k left out: tools/vm/matrix.sh cannot make it"
		fi
	done
fi

mkdir -p "$out"
# The cases, from the runner the VM runs build (matrix.sh builds it first).
cases=$out/cases
for k in "${kernels[@]}"; do
	prepare_kernel "$k" > "$out.$k.prepare.log" 2>&1 ||
		fail "$k: could not fetch or build the kernel (see $out.$k.prepare.log)"
	start=$(date +%s)
	rc=0
	"$TOOLS/vm/matrix.sh" --kernel "$k" --allow-deadlock --out "$out" > "$out.$k.log" 2>&1 ||
		rc=$?
	took=$(($(date +%s) - start))
	"$TOP/build/module_async" --list >"$cases"
	sed -n 's/^matrix: /    verdicts: /p; /^#   /p' "$out.$k.log"
	if [ $rc -eq 0 ]; then
		pass "$k: every verdict as in tools/expected/verdicts, deadlocks allowed"
	else
		fail "$k: verdicts (see $out/$k/compare.log)"
	fi
	if [ "$took" -le "$bound" ]; then
		pass "$k: whole run took ${took}s, bound ${bound}s"
	else
		fail "$k: whole run took ${took}s, over its bound of ${bound}s"
	fi
	doc=$out/$k/results.ktap
	ntimeouts=$(timeouts "$doc" | grep -c .) || true
	bare=$(timeouts_without_evidence "$doc") || true
	if [ "$ntimeouts" -gt 0 ] && [ -z "$bare" ]; then
		pass "$k: each of $ntimeouts TIMEOUTs shows a stack in async_synchronize"
	else
		fail "$k: $ntimeouts TIMEOUTs, without async_synchronize evidence: ${bare:-none}"
	fi
	nocycle=$(timeouts_without_cycle "$doc") || true
	if [ "$ntimeouts" -gt 0 ] && [ -z "$nocycle" ]; then
		pass "$k: each of $ntimeouts TIMEOUTs shows the wait-for cycle"
	else
		fail "$k: $ntimeouts TIMEOUTs, without a wait-for cycle: ${nocycle:-none}"
	fi
	# From each wedged boot the driver's cleanup report and the end
	# marker reached the host: no boot ended on the host's patience.
	nwedged=$(grep -c '^# kernel wedged by ' "$doc") || true
	ncleanup=$(grep -c '^# cleanup: ' "$doc") || true
	lost=$(grep -m1 'no end marker' "$out.$k.log") || lost='every end marker arrived'
	if [ "${lost:0:5}" = every ] && [ "$ncleanup" -ge "$nwedged" ]; then
		pass "$k: each of $nwedged wedged boots sent its cleanup report and end marker"
	else
		fail "$k: $nwedged wedged boots, $ncleanup cleanup reports; $lost"
	fi
	# Each boot's document as a lab without the resume would keep it:
	# the TIMEOUTs and the cases skipped after a wedge under their IDs.
	docs=("$doc")
	for boot in "$out/$k"/boot-*.ktap; do
		[ ! -f "$boot" ] || docs+=("$boot")
	done
	if foreign=$("$TOOLS/ktap/ktap" kernelci-ids --foreign "$cases" "${docs[@]}") &&
	   [ -z "$foreign" ]; then
		pass "$k: every result of every boot keeps its case's KernelCI ID"
	else
		fail "$k: KernelCI IDs that are no case's: ${foreign:-(see above)}"
	fi
	misfiled=$(lab_misfiled "$out/$k/console.log" "$doc" | paste -sd ' ') || true
	if [ -s "$out/$k/console.log" ] && [ -z "$misfiled" ]; then
		pass "$k: a lab reading the whole console files each case once, its verdict right"
	else
		fail "$k: a lab reading the whole console files wrongly: ${misfiled:-no console}"
	fi
done
if [[ " ${kernels[*]} " == *" stock "* ]]; then
	bounds_checks
fi

checks_summary
