#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-compare.sh - host tests of tools/expected/expected: compare, the
# table's reader, and matrix (tools/vm/matrix.sh --reuse).

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
test_options "$@"
readonly expected=$TOOLS/expected/expected

printf '%s\n' '# comment' 'kernel k always-sync' 'policy always-sync' 'status 0' \
	'alpha ok' 'beta skip' 'gamma timeout' 'delta xfail' >"$tmp/expected"
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

# fails CMD...: CMD fails.
fails()
{
	! "$@" >"$tmp/err" 2>&1
}

# accepts STATUS DOCUMENT: compare accepts DOCUMENT of a run exiting STATUS.
accepts()
{
	printf '%s\n' "$2" >"$tmp/doc"
	"$expected" --table "$tmp/expected" compare --status "$1" k "$tmp/doc" >"$tmp/err" 2>&1
}

# The document's form is ktap check's (tools/ktap/test-ktap.sh): compare
# must fail where it does.
check "accept: well formed, all as expected" accepts 0 "$good"
check "reject: wrong verdict" fails accepts 0 "${good/ok 1 alpha/not ok 1 alpha}"
check "reject: skip taken for ok" fails accepts 0 "${good/ # SKIP policy always-sync/}"
check "reject: timeout taken for plain failure" fails accepts 0 "${good/ # TIMEOUT 10s/}"
check "reject: ok taken for an expected failure" fails accepts 0 "${good/ # XFAIL/}"
check "reject: an expected failure taken for ok" fails accepts 0 \
	"${good/ok 1 alpha/ok 1 alpha # XFAIL}"
check "reject: missing case" fails accepts 0 "${good/ok 2 beta # SKIP policy always-sync/}"
check "reject: case twice" fails accepts 0 "${good/1..4/1..5}
ok 5 alpha"
check "reject: unknown case" fails accepts 0 "${good/1..4/1..5}
ok 5 epsilon"
check "reject: malformed: plan mismatch" fails accepts 0 "${good/1..4/1..5}"
check "reject: wrong policy" fails accepts 0 \
	"${good/policy: always-sync/policy: skip-if-unused}"
check "reject: wrong exit status" fails accepts 1 "$good"

# whole KERNEL: each of its columns holds its policy, its status and every
# case of the table once, in the table's order.
whole()
{
	local allow

	for allow in '' --allow-deadlock; do
		# shellcheck disable=SC2086 # $allow is one option or none
		diff <(printf '%s\n' policy status; "$expected" cases) \
			<("$expected" $allow column "$1" | awk '{ print $1 }') >"$tmp/err" || return
	done
}

kernels=$("$expected" kernels)
check "table: it names kernels" test -n "$kernels"
for k in $kernels; do
	check "table: $k's columns, safe and deadlocks allowed, whole" whole "$k"
done
check "table: an unknown kernel fails" fails "$expected" column no-such-kernel

table='kernel k1 always-sync
kernel k2 skip-if-unused beta=not-ok status=1/0
kernel k3 a=1,b=no
	alpha=not-ok
policy always-sync skip-if-unused no-policy
status 0/1 1 0
alpha ok not-ok ok
beta skip/timeout ok skip'
printf '%s\n' "$table" >"$tmp/table"
# resolves '[--allow-deadlock] column KERNEL' LINE...: that column is LINE...
resolves()
{
	# shellcheck disable=SC2086 # an option and a command, a word each
	diff <("$expected" --table "$tmp/table" $1) <(printf '%s\n' "${@:2}") >"$tmp/err"
}
check "table: a kernel takes its policy's column" \
	resolves 'column k1' 'policy always-sync' 'status 0' 'alpha ok' 'beta skip'
check "table: SAFE/ALLOWED cells with --allow-deadlock" \
	resolves '--allow-deadlock column k1' 'policy always-sync' 'status 1' \
		'alpha ok' 'beta timeout'
check "table: a kernel's exceptions replace its column's cells, those only" \
	resolves 'column k2' 'policy skip-if-unused' 'status 1' 'alpha not-ok' 'beta not-ok'
check "table: an exception's SAFE/ALLOWED cell" \
	resolves '--allow-deadlock column k2' 'policy skip-if-unused' 'status 0' \
		'alpha not-ok' 'beta not-ok'
check "table: facts for a policy take the no-policy column, exceptions on a tab line" \
	resolves 'column k3' 'policy a=1,b=no' 'status 0' 'alpha not-ok' 'beta skip'
printf '%s\n' "kernel k0 skip-if-unused" "$table" >"$tmp/table4"
check "table: the kernels in the map's order, a kernel more a line more" \
	diff <("$expected" --table "$tmp/table4" kernels) <(printf '%s\n' k0 k1 k2 k3)

# rejected TABLE: the reader fails on TABLE, saying where.
rejected()
{
	printf '%s\n' "$1" >"$tmp/table"
	fails "$expected" --table "$tmp/table" column k1 &&
		grep -q "^$tmp/table:[0-9]*: " "$tmp/err"
}
check "table: a cell missing is rejected" rejected "${table/skip\/timeout /}"
check "table: an unknown verdict is rejected" rejected "${table/not-ok ok/failed ok}"
check "table: a case twice is rejected" rejected "$table
alpha skip ok skip"
check "table: a bad status is rejected" rejected "${table/0\/1/zero}"
check "table: no policy row is rejected" rejected "${table/policy always-sync /}"
check "table: a kernel twice is rejected" rejected "kernel k1 own-work
$table"
check "table: a kernel of no column is rejected" rejected "${table/k1 always-sync/k1 own-work}"
check "table: an exception naming no case is rejected" rejected "${table/beta=not-ok/gamma=not-ok}"
check "table: an exception with a bad verdict is rejected" \
	rejected "${table/beta=not-ok/beta=failed}"
check "table: an exception that repeats its column's cell is rejected" \
	rejected "${table/beta=not-ok/beta=ok}"
check "table: a case excepted twice is rejected" \
	rejected "${table/beta=not-ok/beta=not-ok beta=skip}"
check "table: a broken kernel with its base's verdicts is rejected" \
	rejected "kernel k1+same always-sync
$table"

# results_of KERNEL: $tmp/m/KERNEL/ as a run giving the table's verdicts leaves it.
results_of()
{
	local n=0 row verdict

	mkdir -p "$tmp/m/$1"
	"$expected" column "$1" | {
		while read -r row verdict; do
			case $row:$verdict in
			policy:*) printf 'KTAP version 1\n# policy: %s\n' "$verdict" ;;
			status:*) echo "$verdict" >"$tmp/m/$1/status" ;;
			*:ok | *:skip | *:xfail) echo "ok $((n += 1)) $row # ${verdict^^}" ;;
			*) echo "not ok $((n += 1)) $row # ${verdict^^}" ;;
			esac
		done
		echo "1..$n"
	} >"$tmp/m/$1/results.ktap"
}

# matrix_says RC VERDICT WHAT: matrix.sh --reuse of $base and $k exits RC, WHAT VERDICT.
matrix_says()
{
	run_to "$tmp/matrix" "$TOOLS/vm/matrix.sh" --reuse --kernel "$base" --kernel "$k" \
		--out "$tmp/m"
	[ $rc -eq "$1" ] && "$KTAP" verdicts "$tmp/matrix" | cut -d ' ' -f 2- | grep -qxF -- "$3 $2"
}

broken=$(grep -e + <<<"$kernels" || true)
check "table: it names broken kernels (KERNEL+BROKEN)" test -n "$broken"
listed=$("$TOOLS/vm/matrix.sh" --list 2>/dev/null) || true
for k in $broken; do
	check "matrix.sh: runs the broken kernel $k" grep -qxF -- "$k" <<<"$listed"
done

k=${broken%%$'\n'*}
base=${k%%+*}
results_of "$base"
results_of "$k"
details=$tmp/matrix
differ=$(LC_ALL=C join -o 0,1.2,2.2 <("$expected" column "$base" | LC_ALL=C sort) \
	<("$expected" column "$k" | LC_ALL=C sort) |
	awk '$2 != $3 && $1 != "status" && $1 != "policy"' | paste -sd ';' | sed 's/;/; /g')
check "matrix.sh: $k beside $base, as the table has them, differs" \
	matrix_says 0 ok "$k differs from $base (case, $base, $k): $differ"
check "matrix.sh: $base's and $k's runs checked" matrix_says 0 ok \
	"$k: as tools/expected/verdicts has it"
cp "$tmp/m/$base/results.ktap" "$tmp/m/$k/results.ktap"
check "matrix.sh: $k giving $base's verdicts fails" matrix_says 1 not-ok "$k differs from $base"
check "matrix.sh: $k giving $base's verdicts is not as the table has it" \
	matrix_says 1 not-ok "$k: as tools/expected/verdicts has it"
check "matrix.sh: the table marks a cell not the table's" grep -q ' !' "$tmp/matrix"

checks_summary
