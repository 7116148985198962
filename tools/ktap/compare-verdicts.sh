#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare-verdicts.sh - check a KTAP document against expected verdicts.
#
# The document must be well formed (a version line, one plan, results
# numbered 1..N in order, as many as planned) and every case must appear
# exactly once with its expected verdict; the policy diagnostic line must
# match too. Prints its checks in KTAP (tools/lib.sh's reporter) and exits
# 1 if any check failed.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	cat <<EOF
usage: $PROG [--status N] RESULTS.ktap EXPECTED
       $PROG --summary RESULTS.ktap

EXPECTED holds one "<case> <verdict>" line a case, verdict one of
ok, not-ok, skip, xfail, timeout, error; optionally "policy <name>" (the
"# policy:" diagnostic line) and "status <N>" (checked against the
exit status given by --status). Lines starting with # are comments.
tools/expected/expected.sh column KERNEL prints a kernel's.

--summary prints the document reduced to records, one a line:
"version", "plan <N>", "policy <name>", "result <n> <case> <verdict>".
EOF
}

status=
summary_only=0
case "${1:-}" in
-h | --help) usage; exit 0 ;;
--summary) summary_only=1; shift ;;
--status)
	status=${2:-}
	case "$status" in
	'' | *[!0-9]*) usage_error "--status wants a number, not '$status'" ;;
	esac
	shift 2
	;;
esac
[ $# -eq $((2 - summary_only)) ] || usage_error "wrong number of arguments"
for f in "$@"; do
	[ -r "$f" ] || usage_error "cannot read $f"
done

ktap=$TOOLS/ktap/ktap
readonly ktap

if [ $summary_only -eq 1 ]; then
	exec "$ktap" records "$1"
fi


# Well formed: version, one plan, N results numbered 1..N.
check=$(mktemp)
trap 'rm -f "$check"' EXIT
"$ktap" check "$1" >"$check" || true
relay "$check"
# "<n> <case> <verdict>" a result.
results=$("$ktap" verdicts "$1")

# Every result must name an expected case, once.
expected_cases=$(grep -v '^#' "$2" | awk 'NF && $1 != "policy" { print $1 }')
while read -r _ name _; do
	[ -n "$name" ] || continue
	grep -qxF "$name" <<<"$expected_cases" || fail "case $name: not in $2"
done <<<"$results"

# Every expected case exactly once, with its verdict.
while read -r name verdict; do
	case "$name" in '' | '#'*) continue ;; esac
	if [ "$name" = status ]; then
		if [ -z "$status" ]; then
			fail "status: want $verdict, but no --status given"
		elif [ "$status" = "$verdict" ]; then
			pass "status $verdict"
		else
			fail "status: got $status, want $verdict"
		fi
		continue
	fi
	if [ "$name" = policy ]; then
		got=$("$ktap" policy "$1" | tr '\n' ' ')
		if [ "$got" = "$verdict " ]; then
			pass "policy $verdict"
		else
			fail "policy: got '${got% }', want '$verdict'"
		fi
		continue
	fi
	got=$(awk -v n="$name" '$2 == n { print $3 }' <<<"$results" | tr '\n' ' ')
	case "$got" in
	"$verdict ") pass "case $name $verdict" ;;
	'') fail "case $name: missing, want $verdict" ;;
	*' '*' '*) fail "case $name: appears more than once ($got)" ;;
	*) fail "case $name: got ${got% }, want $verdict" ;;
	esac
done < "$2"

checks_summary
