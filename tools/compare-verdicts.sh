#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare-verdicts.sh - check a KTAP document against expected verdicts.
#
# The document must be well formed (a version line, one plan, results
# numbered 1..N in order, as many as planned) and every case must appear
# exactly once with its expected verdict; the policy diagnostic line must
# match too. Prints one line per check, "PASS <what>" or "FAIL <what>: why",
# and exits 1 if any check failed.

set -euo pipefail

readonly prog=${0##*/}
PROG=$prog
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

usage()
{
	cat <<EOF
usage: $prog [--status N] RESULTS.ktap EXPECTED
       $prog --summary RESULTS.ktap

EXPECTED holds one "<case> <verdict>" line a case, verdict one of
ok, not-ok, skip, timeout, error; optionally "policy <name>" (the
"# policy:" diagnostic line) and "status <N>" (checked against the
exit status given by --status). Lines starting with # are comments.

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
	'' | *[!0-9]*) usage >&2; exit 2 ;;
	esac
	shift 2
	;;
esac
[ $# -eq $((2 - summary_only)) ] || { usage >&2; exit 2; }
for f in "$@"; do
	[ -r "$f" ] || { echo "$prog: cannot read $f" >&2; exit 2; }
done

# Reduce the document to "result <n> <name> <verdict>", "plan <n>",
# "version", "policy <name>" and "junk <line>" records. Only top-level
# lines count: indented lines belong to subtests.
summarise()
{
	awk '
	/^(TAP version 13|KTAP version 1)$/ { print "version"; next }
	/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); sub(/[^0-9].*/, ""); print "plan", $0; next }
	/^# policy: / { print "policy", $3; next }
	/^(not )?ok [0-9]+ / {
		verdict = "ok"
		if ($1 == "not") { verdict = "not-ok"; n = $3; name = $4 }
		else { n = $2; name = $3 }
		if (name == "#") name = ""
		directive = ""
		if (index($0, " # ")) {
			directive = substr($0, index($0, " # ") + 3)
			split(directive, d, " ")
			directive = toupper(d[1])
		}
		if (verdict == "ok" && directive == "SKIP") verdict = "skip"
		if (verdict == "not-ok" && directive == "TIMEOUT") verdict = "timeout"
		if (verdict == "not-ok" && directive == "ERROR") verdict = "error"
		print "result", n, (name == "" ? "(unnamed)" : name), verdict
		next
	}
	' "$1"
}

if [ $summary_only -eq 1 ]; then
	summarise "$1"
	exit 0
fi

passed=0
failed=0

summary=$(summarise "$1")

# Well formed: version, one plan, N results numbered 1..N.
versions=$(grep -c '^version$' <<<"$summary" || true)
plans=$(grep '^plan ' <<<"$summary" || true)
results=$(grep '^result ' <<<"$summary" || true)
nresults=$(grep -c . <<<"$results" || true)
if [ "$versions" -eq 1 ]; then
	pass "ktap: one version line"
else
	fail "ktap: $versions version lines, want 1"
fi
if [ "$(grep -c . <<<"$plans" || true)" -eq 1 ]; then
	planned=${plans#plan }
	if [ "$planned" -eq "$nresults" ]; then
		pass "ktap: plan 1..$planned matches $nresults results"
	else
		fail "ktap: plan 1..$planned but $nresults results"
	fi
else
	fail "ktap: want exactly one plan line, got: ${plans:-none}"
fi
numbers=$(awk '{ print $2 }' <<<"$results" | tr '\n' ' ')
want=$(seq 1 "$nresults" | tr '\n' ' ')
if [ "$numbers" = "$want" ]; then
	pass "ktap: results numbered 1..$nresults in order"
else
	fail "ktap: result numbers are '$numbers', want '$want'"
fi

# Every result must name an expected case, once.
expected_cases=$(grep -v '^#' "$2" | awk 'NF && $1 != "policy" { print $1 }')
while read -r _ _ name _; do
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
		got=$(grep '^policy ' <<<"$summary" | awk '{ print $2 }' | tr '\n' ' ')
		if [ "$got" = "$verdict " ]; then
			pass "policy $verdict"
		else
			fail "policy: got '${got% }', want '$verdict'"
		fi
		continue
	fi
	got=$(awk -v n="$name" '$3 == n { print $4 }' <<<"$results" | tr '\n' ' ')
	case "$got" in
	"$verdict ") pass "case $name $verdict" ;;
	'') fail "case $name: missing, want $verdict" ;;
	*' '*' '*) fail "case $name: appears more than once ($got)" ;;
	*) fail "case $name: got ${got% }, want $verdict" ;;
	esac
done < "$2"

checks_summary
