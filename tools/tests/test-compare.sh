#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-compare.sh - host tests of tools/expected/expected: compare accepts a
# document with the expected verdicts and rejects each kind of defect (a
# wrong verdict, a missing, repeated or unknown case, a malformed document,
# a wrong policy or exit status); the table's reader resolves every kernel
# of the map whole, applies exceptions and rejects a malformed table; each
# broken kernel (KERNEL+BROKEN) differs from KERNEL, and tools/vm/matrix.sh
# fails one that gives KERNEL's verdicts.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly expected=$TOOLS/expected/expected

usage()
{
	echo "usage: $PROG"
	echo "Host tests of tools/expected/expected."
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
'') ;;
*) usage_error "unknown argument '$1'" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%s\n' '# comment' 'kernel k always-sync' 'policy always-sync' 'status 0' \
	'alpha ok' 'beta skip' 'gamma timeout' 'delta xfail' > "$tmp/expected"

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

# accepts STATUS DOCUMENT: compare accepts DOCUMENT of a run that exited
# STATUS; rejects: it does not.
accepts()
{
	printf '%s\n' "$2" > "$tmp/doc"
	"$expected" --table "$tmp/expected" compare --status "$1" k "$tmp/doc"
}
rejects()
{
	! accepts "$@"
}

# The document's form is ktap check's (tools/ktap/test-ktap.sh: no version,
# no plan, misnumbered, empty): compare must fail where it does.
check "accept: well formed, all as expected" accepts 0 "$good"
check "reject: wrong verdict" rejects 0 "${good/ok 1 alpha/not ok 1 alpha}"
check "reject: skip taken for ok" rejects 0 "${good/ # SKIP policy always-sync/}"
check "reject: timeout taken for plain failure" rejects 0 "${good/ # TIMEOUT 10s/}"
check "reject: ok taken for an expected failure" rejects 0 "${good/ # XFAIL/}"
check "reject: an expected failure taken for ok" rejects 0 \
	"${good/ok 1 alpha/ok 1 alpha # XFAIL}"
check "reject: missing case" rejects 0 "${good/ok 2 beta # SKIP policy always-sync/}"
check "reject: case twice" rejects 0 "${good/1..4/1..5}
ok 5 alpha"
check "reject: unknown case" rejects 0 "${good/1..4/1..5}
ok 5 epsilon"
check "reject: malformed: plan mismatch" rejects 0 "${good/1..4/1..5}"
check "reject: wrong policy" rejects 0 "${good/policy: always-sync/policy: skip-if-unused}"
check "reject: wrong exit status" rejects 1 "$good"

# whole KERNEL: each of its columns holds its policy, its status and every
# case of the table once, in the table's order.
whole()
{
	local allow

	for allow in '' --allow-deadlock; do
		# shellcheck disable=SC2086 # $allow is one option or none
		diff <(printf '%s\n' policy status; "$expected" cases) \
			<("$expected" $allow column "$1" | awk '{ print $1 }') || return
	done
}

# table_rejected TABLE: the reader fails on it, saying where.
table_rejected()
{
	printf '%s\n' "$1" > "$tmp/table"
	! "$expected" --table "$tmp/table" column k1 > /dev/null 2> "$tmp/err" &&
		grep -q "^$tmp/table:[0-9]*: " "$tmp/err"
}

kernels=$("$expected" kernels)
check "table: it names kernels" test -n "$kernels"
for k in $kernels; do
	check "table: $k's columns, safe and deadlocks allowed, whole" whole "$k"
done
if "$expected" column no-such-kernel 2>/dev/null; then
	fail "table: an unknown kernel fails"
else
	pass "table: an unknown kernel fails"
fi

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
	diff <("$expected" --table "$tmp/table" $allow column "$k") <(printf '%s\n' "$@")
}
check "table: a kernel takes its policy's column" \
	resolves k1 'policy always-sync' 'status 0' 'alpha ok' 'beta skip'
check "table: SAFE/ALLOWED cells with --allow-deadlock" \
	resolves k1 --allow-deadlock 'policy always-sync' 'status 1' 'alpha ok' 'beta timeout'
check "table: a kernel's exceptions replace its column's cells, those only" \
	resolves k2 'policy skip-if-unused' 'status 1' 'alpha not-ok' 'beta not-ok'
check "table: an exception's SAFE/ALLOWED cell" \
	resolves k2 --allow-deadlock 'policy skip-if-unused' 'status 0' 'alpha not-ok' 'beta not-ok'
check "table: facts for a policy take the no-policy column, exceptions on a tab line" \
	resolves k3 'policy a=1,b=no' 'status 0' 'alpha not-ok' 'beta skip'
printf '%s\n' "kernel k0 skip-if-unused" "$table" > "$tmp/table4"
check "table: the kernels in the map's order, a kernel more a line more" \
	diff <("$expected" --table "$tmp/table4" kernels) <(printf '%s\n' k0 k1 k2 k3)
check "table: a cell missing is rejected" table_rejected "${table/skip\/timeout /}"
check "table: an unknown verdict is rejected" table_rejected "${table/not-ok ok/failed ok}"
check "table: a case twice is rejected" table_rejected "$table
alpha skip ok skip"
check "table: a bad status is rejected" table_rejected "${table/0\/1/zero}"
check "table: no policy row is rejected" table_rejected "${table/policy always-sync /}"
check "table: a kernel twice is rejected" table_rejected "kernel k1 own-work
$table"
check "table: a kernel of no column is rejected" \
	table_rejected "${table/k1 always-sync/k1 own-work}"
check "table: an exception naming no case is rejected" \
	table_rejected "${table/beta=not-ok/gamma=not-ok}"
check "table: an exception with a bad verdict is rejected" \
	table_rejected "${table/beta=not-ok/beta=failed}"
check "table: an exception that repeats its column's cell is rejected" \
	table_rejected "${table/beta=not-ok/beta=ok}"
check "table: a case excepted twice is rejected" \
	table_rejected "${table/beta=not-ok/beta=not-ok beta=skip}"
check "table: a broken kernel with its base's verdicts is rejected" \
	table_rejected "kernel k1+same always-sync
$table"

# ---- broken kernels: tools/vm/matrix.sh's KERNEL+BROKEN columns -------------

# case_verdicts KERNEL: "case verdict" lines of KERNEL's column, safe run.
case_verdicts()
{
	"$expected" column "$1" | awk '$1 != "policy" && $1 != "status"'
}

# results_of KERNEL DIR: DIR/KERNEL/ as a VM run of KERNEL giving the table's
# verdicts would leave it (a directive for each verdict, read as such).
results_of()
{
	local n=0 row verdict

	mkdir -p "$2/$1"
	"$expected" column "$1" | {
		while read -r row verdict; do
			case $row:$verdict in
			policy:*) printf 'KTAP version 1\n# policy: %s\n' "$verdict" ;;
			status:*) echo "$verdict" > "$2/$1/status" ;;
			*:ok | *:skip | *:xfail) echo "ok $((n += 1)) $row # ${verdict^^}" ;;
			*) echo "not ok $((n += 1)) $row # ${verdict^^}" ;;
			esac
		done
		echo "1..$n"
	} > "$2/$1/results.ktap"
}

# matrix_says KERNEL RC VERDICT WHAT: matrix.sh on KERNEL's and its base's
# results in $tmp/m exits RC, its result WHAT is VERDICT.
matrix_says()
{
	local rc=0

	"$TOOLS/vm/matrix.sh" --reuse --kernel "${1%%+*}" --kernel "$1" --out "$tmp/m" \
		> "$tmp/matrix" 2>&1 || rc=$?
	[ $rc -eq "$2" ] &&
		"$TOOLS/ktap/ktap" verdicts "$tmp/matrix" | cut -d ' ' -f 2- | grep -qxF -- "$4 $3"
}

broken=$(grep -e + <<<"$kernels" || true)
check "table: it names broken kernels (KERNEL+BROKEN)" test -n "$broken"
listed=$("$TOOLS/vm/matrix.sh" --list 2>/dev/null) || true
for k in $broken; do
	check "matrix.sh: runs the broken kernel $k" grep -qxF -- "$k" <<<"$listed"
done

# A broken kernel run beside its base as the table has them, then giving its
# base's verdicts.
k=${broken%%$'\n'*}
base=${k%%+*}
results_of "$base" "$tmp/m"
results_of "$k" "$tmp/m"
differ=$(LC_ALL=C join -o 0,1.2,2.2 <(case_verdicts "$base" | LC_ALL=C sort) \
	<(case_verdicts "$k" | LC_ALL=C sort) | awk '$2 != $3' | paste -sd ';' | sed 's/;/; /g')
check "matrix.sh: $k beside $base, as the table has them, differs" \
	matrix_says "$k" 0 ok "$k differs from $base (case, $base, $k): $differ"
check "matrix.sh: $base's and $k's runs checked" matrix_says "$k" 0 ok \
	"$k: as tools/expected/verdicts has it"
cp "$tmp/m/$base/results.ktap" "$tmp/m/$k/results.ktap"
check "matrix.sh: $k giving $base's verdicts fails" \
	matrix_says "$k" 1 not-ok "$k differs from $base"
check "matrix.sh: $k giving $base's verdicts is not as the table has it" \
	matrix_says "$k" 1 not-ok "$k: as tools/expected/verdicts has it"
check "matrix.sh: the table marks a cell not the table's" grep -q ' !' "$tmp/matrix"

checks_summary
