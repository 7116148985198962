#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-compare.sh - host tests of compare-verdicts.sh: it must accept a
# well-formed document with the expected verdicts and reject each kind of
# defect (wrong verdict, missing or repeated case, bad plan, misnumbered
# results, wrong policy, wrong exit status); and of the expected-verdicts
# table's reader, tools/expected/expected.sh: every kernel of the map
# resolved whole, exceptions applied, a malformed table or map rejected;
# and of the table's broken kernels (KERNEL+BROKEN): each run by
# tools/vm/matrix.sh, each differing from KERNEL in a case's verdict, and
# matrix.sh failing one that gives KERNEL's.

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
delta xfail
EOF

good='TAP version 13
1..4
# policy: always-sync
ok 1 alpha
ok 2 beta # SKIP policy always-sync
# stack: foo
not ok 3 gamma # TIMEOUT 10s
ok 4 delta # XFAIL
# delta: XFAIL a known failure
# Totals: pass:1 fail:1 xfail:1 xpass:0 skip:1 error:0'

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
expect reject "ok taken for an expected failure" 0 "${good/ # XFAIL/}"
expect reject "an expected failure taken for ok" 0 "${good/ok 1 alpha/ok 1 alpha # XFAIL}"
expect reject "missing case" 0 "${good/ok 2 beta # SKIP policy always-sync/}"
expect reject "case twice" 0 "$good
ok 4 alpha"
expect reject "unknown case" 0 "${good/alpha/epsilon}"
expect reject "plan mismatch" 0 "${good/1..4/1..5}"
expect reject "no plan" 0 "${good/1..4/}"
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

# column_whole [--allow-deadlock] KERNEL: the column has a policy (a name,
# or the facts where they name none), a status and every case of the table
# once, in the table's order.
column_whole()
{
	"$expected" "$@" > "$tmp/column" &&
		grep -v '^#' "$tmp/column" |
			awk '$1 != "policy" && $1 != "status" { print $1 }' > "$tmp/cases" &&
		diff <("$expected" cases) "$tmp/cases" &&
		[ "$(grep -cE '^policy [a-z_=,-]+$' "$tmp/column")" = 1 ] &&
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

table='kernel k1 always-sync
kernel k2 skip-if-unused beta=not-ok status=1/0
kernel k3 a=1,b=no
	alpha=not-ok
policy always-sync skip-if-unused no-policy
status 0/1 1 0
alpha ok not-ok ok
beta skip/timeout ok skip'
printf '%s\n' "$table" > "$tmp/table"
# resolves KERNEL [--allow-deadlock] LINE...: KERNEL's column is LINE...
resolves()
{
	local k=$1 allow=

	shift
	[ "$1" != --allow-deadlock ] || { allow=$1; shift; }
	# shellcheck disable=SC2086 # $allow is one option or none
	diff <("$expected" --table "$tmp/table" $allow column "$k" | grep -v '^#') \
		<(printf '%s\n' "$@")
}
check "expected.sh: a kernel takes its policy's column" \
	resolves k1 'policy always-sync' 'status 0' 'alpha ok' 'beta skip'
check "expected.sh: SAFE/ALLOWED cells with --allow-deadlock" \
	resolves k1 --allow-deadlock 'policy always-sync' 'status 1' 'alpha ok' 'beta timeout'
check "expected.sh: a kernel's exceptions replace its column's cells, those only" \
	resolves k2 'policy skip-if-unused' 'status 1' 'alpha not-ok' 'beta not-ok'
check "expected.sh: an exception's SAFE/ALLOWED cell" \
	resolves k2 --allow-deadlock 'policy skip-if-unused' 'status 0' 'alpha not-ok' 'beta not-ok'
check "expected.sh: facts for a policy take the no-policy column, exceptions on a tab line" \
	resolves k3 'policy a=1,b=no' 'status 0' 'alpha not-ok' 'beta skip'
check "expected.sh: the kernels in the map's order" \
	diff <("$expected" --table "$tmp/table" kernels) <(printf '%s\n' k1 k2 k3)
printf '%s\n' "kernel k0 skip-if-unused" "$table" > "$tmp/table4"
check "expected.sh: a kernel more is a line more" \
	diff <("$expected" --table "$tmp/table4" kernels) <(printf '%s\n' k0 k1 k2 k3)
check "expected.sh: a cell missing is rejected" table_rejected "${table/skip\/timeout /}"
check "expected.sh: an unknown verdict is rejected" table_rejected "${table/not-ok ok/failed ok}"
check "expected.sh: a case twice is rejected" table_rejected "$table
alpha skip ok skip"
check "expected.sh: a bad status is rejected" table_rejected "${table/0\/1/zero}"
check "expected.sh: no policy row is rejected" table_rejected "${table/policy always-sync /}"
check "expected.sh: a kernel twice is rejected" table_rejected "kernel k1 own-work
$table"
check "expected.sh: a kernel of no column is rejected" \
	table_rejected "${table/k1 always-sync/k1 own-work}"
check "expected.sh: an exception naming no case is rejected" \
	table_rejected "${table/beta=not-ok/gamma=not-ok}"
check "expected.sh: an exception with a bad verdict is rejected" \
	table_rejected "${table/beta=not-ok/beta=failed}"
check "expected.sh: an exception that repeats its column's cell is rejected" \
	table_rejected "${table/beta=not-ok/beta=ok}"
check "expected.sh: a case excepted twice is rejected" \
	table_rejected "${table/beta=not-ok/beta=not-ok beta=skip}"

# ---- broken kernels: tools/vm/matrix.sh's KERNEL+BROKEN columns -------------

# case_verdicts KERNEL: "case verdict" lines of KERNEL's column, safe run.
case_verdicts()
{
	"$expected" column "$1" | awk '!/^#/ && $1 != "policy" && $1 != "status"'
}

# doc_of KERNEL: a KTAP document with KERNEL's verdicts as the table has them.
doc_of()
{
	"$expected" column "$1" | awk '
		$1 == "policy" { policy = $2 }
		/^#/ || $1 == "policy" || $1 == "status" { next }
		{ n++; name[n] = $1; v[n] = $2 }
		END {
			print "KTAP version 1"
			print "1.." n
			print "# policy: " policy
			for (i = 1; i <= n; i++) {
				line = (v[i] ~ /^(ok|skip)$/ ? "ok " : "not ok ") i " " name[i]
				if (v[i] == "skip") line = line " # SKIP a reason"
				if (v[i] == "timeout") line = line " # TIMEOUT 10s"
				print line
			}
		}'
}

# results_of KERNEL DIR: DIR/KERNEL/ as a VM run of KERNEL would leave it.
results_of()
{
	mkdir -p "$2/$1"
	doc_of "$1" > "$2/$1/results.ktap"
	"$expected" column "$1" | awk '$1 == "status" { print $2 }' > "$2/$1/status"
}

# differs KERNEL: KERNEL's column differs from its base's in a case's verdict.
differs()
{
	! diff <(case_verdicts "${1%%+*}") <(case_verdicts "$1") > /dev/null
}

# matrix_says KERNEL LINE: matrix.sh on KERNEL's and its base's results in
# $tmp/m prints LINE, and fails where LINE says the two cannot be told apart.
matrix_says()
{
	local rc=0

	"$TOOLS/vm/matrix.sh" --reuse --kernel "${1%%+*}" --kernel "$1" --out "$tmp/m" \
		> "$tmp/matrix" 2>&1 || rc=$?
	case $2 in *"cannot tell"*) [ $rc -ne 0 ] ;; *) [ $rc -eq 0 ] ;; esac &&
		grep -qxF -- "$2" "$tmp/matrix"
}

broken=$(grep -e + <<<"$kernels" || true)
check "expected.sh: the table names broken kernels (KERNEL+BROKEN)" test -n "$broken"
listed=$("$TOOLS/vm/matrix.sh" --list 2>/dev/null) || true
for k in $broken; do
	check "matrix.sh: runs the broken kernel $k" grep -qxF -- "$k" <<<"$listed"
	check "expected.sh: $k differs from ${k%%+*} in a case's verdict" differs "$k"
done

# A broken kernel the table tells from its base, run beside it as the table
# has them, then giving its base's verdicts.
for k in $broken; do
	if differs "$k"; then
		base=${k%%+*}
		results_of "$base" "$tmp/m"
		results_of "$k" "$tmp/m"
		differ=$(LC_ALL=C join -o 0,1.2,2.2 <(case_verdicts "$base" | LC_ALL=C sort) \
			<(case_verdicts "$k" | LC_ALL=C sort) | awk '$2 != $3' | tr '\n' ';')
		check "matrix.sh: $k beside $base, as the table has them, differs" \
			matrix_says "$k" "# $k differs from $base (case, $base, $k): $differ"
		cp "$tmp/m/$base/results.ktap" "$tmp/m/$k/results.ktap"
		check "matrix.sh: $k giving $base's verdicts fails" matrix_says "$k" \
			"# $k: every case's verdict is $base's: the suite cannot tell them apart"
		break
	fi
done

checks_summary
