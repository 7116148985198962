#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-compare.sh - host tests of compare-verdicts.sh: it must accept a
# well-formed document with the expected verdicts and reject each kind of
# defect (wrong verdict, missing or repeated case, bad plan, misnumbered
# results, wrong policy, wrong exit status); and of the expected-verdicts
# table's reader, tools/expected/expected.sh: every column of the table
# whole, a malformed table rejected.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly compare=$TOOLS/ktap/compare-verdicts.sh
readonly expected=$TOOLS/expected/expected.sh

usage()
{
	echo "usage: $PROG"
	echo "Host tests of compare-verdicts.sh and tools/expected/expected.sh."
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
'') ;;
*) usage_error "unknown argument '$1'" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/expected" <<'EOF'
# comment
policy always-sync
status 0
alpha ok
beta skip
gamma timeout
EOF

good='TAP version 13
1..3
# policy: always-sync
ok 1 alpha
ok 2 beta # SKIP policy always-sync
# stack: foo
not ok 3 gamma # TIMEOUT 10s
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0'

# expect <accept|reject> <what> <exit status> <document>
expect()
{
	local want=$1 what=$2 status=$3 got

	printf '%s\n' "$4" > "$tmp/doc"
	if "$compare" --status "$status" "$tmp/doc" "$tmp/expected" > "$tmp/out"; then
		got=accept
	else
		got=reject
	fi
	if [ "$got" = "$want" ]; then
		pass "$want: $what"
	else
		fail "$what: want $want, got $got"
		sed 's/^/    /' "$tmp/out"
	fi
}

expect accept "well formed, all as expected" 0 "$good"
expect accept "KTAP version 1 header" 0 "${good/TAP version 13/KTAP version 1}"
expect reject "wrong verdict" 0 "${good/ok 1 alpha/not ok 1 alpha}"
expect reject "skip taken for ok" 0 "${good/ # SKIP policy always-sync/}"
expect reject "timeout taken for plain failure" 0 "${good/ # TIMEOUT 10s/}"
expect reject "missing case" 0 "${good/ok 2 beta # SKIP policy always-sync/}"
expect reject "case twice" 0 "$good
ok 4 alpha"
expect reject "unknown case" 0 "${good/alpha/delta}"
expect reject "plan mismatch" 0 "${good/1..3/1..4}"
expect reject "no plan" 0 "${good/1..3/}"
expect reject "no version line" 0 "${good/TAP version 13/}"
expect reject "misnumbered" 0 "${good/ok 2 beta/ok 5 beta}"
expect reject "wrong policy" 0 "${good/policy: always-sync/policy: skip-if-unused}"
expect reject "wrong exit status" 1 "$good"
expect reject "empty document" 0 ""

# check WHAT CMD...: CMD succeeds.
check()
{
	local what=$1

	shift
	if "$@" > "$tmp/out" 2>&1; then
		pass "$what"
	else
		fail "$what"
		sed 's/^/    /' "$tmp/out"
	fi
}

# column_whole [--allow-deadlock] KERNEL: the column has a policy, a
# status and every case of the table once, in the table's order.
column_whole()
{
	"$expected" "$@" > "$tmp/column" &&
		grep -v '^#' "$tmp/column" |
			awk '$1 != "policy" && $1 != "status" { print $1 }' > "$tmp/cases" &&
		diff <("$expected" cases) "$tmp/cases" &&
		[ "$(grep -c '^policy [a-z-]*$' "$tmp/column")" = 1 ] &&
		[ "$(grep -c '^status [0-9]*$' "$tmp/column")" = 1 ]
}

# table_rejected TABLE: expected.sh fails on it, saying where.
table_rejected()
{
	printf '%s\n' "$1" > "$tmp/table"
	! "$expected" --table "$tmp/table" column k1 > /dev/null 2> "$tmp/err" &&
		grep -q "^$tmp/table:[0-9]*: " "$tmp/err"
}

kernels=$("$expected" kernels)
check "expected.sh: the table names kernels" test -n "$kernels"
for k in $kernels; do
	check "expected.sh: $k's column, safe run, whole" column_whole column "$k"
	check "expected.sh: $k's column, deadlocks allowed, whole" \
		column_whole --allow-deadlock column "$k"
done
unknown_kernel_fails()
{
	! "$expected" column no-such-kernel
}
check "expected.sh: an unknown kernel fails" unknown_kernel_fails

table='kernel k1 k2
policy always-sync skip-if-unused
status 0/1 1
alpha ok not-ok
beta skip/timeout ok'
printf '%s\n' "$table" > "$tmp/table"
check "expected.sh: a cell for both runs" \
	diff <("$expected" --table "$tmp/table" column k1 | grep -v '^#') \
		<(printf '%s\n' 'policy always-sync' 'status 0' 'alpha ok' 'beta skip')
check "expected.sh: SAFE/ALLOWED cells with --allow-deadlock" \
	diff <("$expected" --table "$tmp/table" --allow-deadlock column k1 | grep -v '^#') \
		<(printf '%s\n' 'policy always-sync' 'status 1' 'alpha ok' 'beta timeout')
printf '%s\n' "$table" | awk '{ print $0, $NF }' |
	sed '1s/ k2$/ k3/' > "$tmp/table3"
check "expected.sh: a kernel more is a column more" \
	diff <("$expected" --table "$tmp/table3" kernels) <(printf '%s\n' k1 k2 k3)
check "expected.sh: a cell missing is rejected" table_rejected "${table/skip\/timeout /}"
check "expected.sh: an unknown verdict is rejected" table_rejected "${table/not-ok/failed}"
check "expected.sh: a case twice is rejected" table_rejected "$table
alpha ok ok"
check "expected.sh: a bad status is rejected" table_rejected "${table/0\/1/zero}"
check "expected.sh: no kernel row is rejected" table_rejected "${table/kernel k1 k2/}"

checks_summary
