#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-deadlock.sh - the suite with deadlocks allowed, on every known kernel:
# the verdict matrix against tools/expected/verdicts, deadlocks allowed (every
# unsafe case a TIMEOUT, every safe case its usual verdict, one well-formed
# document per kernel although the run took several boots), each TIMEOUT
# backed by a stack that shows the wait in async_synchronize*, and each
# kernel's whole run within its bound.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly ktap=$TOOLS/ktap/ktap

usage()
{
	cat <<EOF
usage: $PROG [--out DIR] [--bound SECONDS]

  --out DIR        results go to DIR/<kernel>/ (default: build/check/deadlock)
  --bound SECONDS  bound on each kernel's whole run, not counting the
                   kernel's fetch or build (default: 600)
EOF
}

out=$TOP/build/check/deadlock
bound=600
while [ $# -gt 0 ]; do
	case "$1" in
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

for k in stock vanilla patched; do
	# The bound is on the run, not on fetching or building the kernel.
	if [ "$k" = stock ]; then
		"$TOOLS/kernel/fetch-kernel.sh" > /dev/null 2>&1
	else
		"$TOOLS/kernel/build-kernel.sh" --variant "$k" > /dev/null 2>&1
	fi || fail "$k: could not fetch or build the kernel"
	start=$(date +%s)
	rc=0
	"$TOOLS/vm/matrix.sh" --kernel "$k" --allow-deadlock --out "$out" > "$out.$k.log" 2>&1 ||
		rc=$?
	took=$(($(date +%s) - start))
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
done

checks_summary
