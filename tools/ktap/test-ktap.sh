#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-ktap.sh - tests of tools/ktap/ktap, the KTAP reader: documents it must
# accept and reject, what each command reads from them, the merge of a
# run's boots, a document nested in a kselftest runner's.
#
# One "PASS what" or "FAIL what" line a check, then "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly KTAP=$TOOLS/ktap/ktap

usage()
{
	cat <<EOF
Usage: $PROG

Tests of tools/ktap/ktap; ends with "N passed, N failed".
EOF
}

case ${1:-} in
-h | --help) usage; exit 0 ;;
'') ;;
*) usage_error "unknown argument '$1'" ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-ktap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# A document with each kind of line: the suite's evidence before a result,
# a skip's reason line before it and a failure's cause after it, an unnamed
# result with its reason in the directive, a "- " description, a subtest's
# indented lines, a directive ending in a blank (kselftest.h's
# ksft_test_result_code()), a case not run after a wedge, CRLF.
printf '%s\r\n' 'TAP version 13' '1..6' '# policy: always-sync' \
	'# evidence of alpha' 'ok 1 alpha' \
	'    KTAP version 1' '    1..1' '    not ok 1 inner' \
	'# beta: SKIP policy always-sync' 'ok 2 beta # SKIP' \
	'# stack: async_synchronize_full' '# more evidence of gamma' \
	'# gamma: TIMEOUT after 10s' 'not ok 3 gamma # TIMEOUT' \
	'# gamma: TIMEOUT the load did not return' \
	'# kernel wedged by gamma' \
	'not ok 4 - delta # ERROR guest died' \
	'ok 5 # skip nothing to do' 'ok 6 zeta # SKIP ' \
	'# epsilon: not run: kernel wedged by gamma' \
	'# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:3 error:1' >"$tmp/doc.ktap"

# A kselftest runner's document with the suite's nested in it.
cat >"$tmp/runner.ktap" <<'EOF'
TAP version 13
1..1
# timeout set to 300
# selftests: module_async: module_async.sh
# TAP version 13
# 1..2
# # policy: always-sync
# ok 1 alpha
#not ok 2 beta
# # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0
not ok 1 selftests: module_async: module_async.sh # exit=1
EOF
readonly HEADER='selftests: module_async: module_async.sh'

# The boots of one run: boot 1 wedges in w1 and runs nothing more; boot 2
# (CRLF lines) dies in w2; boot 3 ends.
cat >"$tmp/boot-1.ktap" <<'EOF'
TAP version 13
1..5
# policy: always-sync
ok 1 a
# evidence of w1
# w1: TIMEOUT after 10s
not ok 2 w1 # TIMEOUT
# w1: TIMEOUT the load did not return
# kernel wedged by w1
# b: not run: kernel wedged by w1
# w2: not run: kernel wedged by w1
# c: not run: kernel wedged by w1
# Planned tests != run tests (5 != 2)
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0
EOF
printf '%s\r\n' 'TAP version 13' '1..3' '# policy: always-sync' '# b: SKIP not here' \
	'ok 1 b # SKIP' '# console: Kernel panic' 'not ok 2 w2 # ERROR guest died' \
	'# w2: ERROR guest died' >"$tmp/boot-2.ktap"
printf '%s\n' 'TAP version 13' '1..1' '# policy: skip-if-unused' 'ok 1 c' \
	'# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0' >"$tmp/boot-3.ktap"
cat >"$tmp/merged.want" <<'EOF'
TAP version 13
1..5
# policy: always-sync
ok 1 a
# evidence of w1
# w1: TIMEOUT after 10s
not ok 2 w1 # TIMEOUT
# w1: TIMEOUT the load did not return
# kernel wedged by w1
# resumed in a fresh VM (boot 2) after w1 wedged the kernel
# boot 2 policy: always-sync
# b: SKIP not here
ok 3 b # SKIP
# console: Kernel panic
not ok 4 w2 # ERROR guest died
# w2: ERROR guest died
# resumed in a fresh VM (boot 3) after the guest died in w2
# boot 3 policy: skip-if-unused
ok 5 c
# Totals: pass:2 fail:1 xfail:0 xpass:0 skip:1 error:1
EOF
printf '%s\n' 'TAP version 13' '1..2' 'ok 1 a # SKIP x' 'ok 2 b # SKIP y' >"$tmp/skipped.ktap"
printf '# no plan\n' >"$tmp/noplan.ktap"

# reads WHAT WANT_RC WANT_OUTPUT ARGS...: ktap ARGS exits WANT_RC and
# prints WANT_OUTPUT (one string, lines joined by newlines).
reads()
{
	local what=$1 want_rc=$2 want=$3 rc=0

	shift 3
	"$KTAP" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" = "$want_rc" ] && [ "$(cat "$tmp/out")" = "$want" ]; then
		pass "$what"
	else
		fail "$what: exit $rc (want $want_rc)"
		diff <(printf '%s\n' "$want") "$tmp/out" | sed 's/^/#   /' || true
	fi
}

# accepts/rejects WHAT DOCUMENT: ktap check of DOCUMENT (a string).
accepts()
{
	printf '%s\n' "$2" >"$tmp/check.ktap"
	if "$KTAP" check "$tmp/check.ktap" >"$tmp/out"; then
		pass "check accepts: $1"
	else
		fail "check accepts: $1"
		sed 's/^/#   /' "$tmp/out"
	fi
}

rejects()
{
	printf '%s\n' "$2" >"$tmp/check.ktap"
	if ! "$KTAP" check "$tmp/check.ktap" >"$tmp/out" &&
	   grep -q '^FAIL ' "$tmp/out"; then
		pass "check rejects: $1"
	else
		fail "check rejects: $1"
		sed 's/^/#   /' "$tmp/out"
	fi
}

good='TAP version 13
1..3
# policy: always-sync
ok 1 alpha
ok 2 beta # SKIP policy always-sync
not ok 3 gamma # TIMEOUT 10s'

doc=$tmp/doc.ktap
reads "verdicts: each verdict, unnamed, '- ', subtests ignored" 0 \
	"1 alpha ok
2 beta skip
3 gamma timeout
4 delta error
5 (unnamed) skip
6 zeta skip" verdicts "$doc"
reads "verdicts: a TIMEOUT with or without its time, an XFAIL" 0 "1 a timeout
2 b timeout
3 c xfail" verdicts <(printf '%s\n' '# a: waited 10.0 s' 'not ok 1 a # TIMEOUT' \
	'# a: TIMEOUT the load did not return' 'not ok 2 b # TIMEOUT 10s' 'ok 3 c # XFAIL')
reads "verdicts from stdin" 0 "1 a ok
2 w1 timeout" verdicts <"$tmp/boot-1.ktap"
reads "results: the result lines as written" 0 \
	"ok 1 a
not ok 2 w1 # TIMEOUT" results "$tmp/boot-1.ktap"
reads "plan" 0 6 plan "$doc"
reads "plan: none" 1 "" plan "$tmp/noplan.ktap"
reads "skip-all: the reason of a whole-document SKIP" 0 "must be run as root" \
	skip-all <(printf '%s\n' 'TAP version 13' '1..0 # SKIP must be run as root')
reads "skip-all: none in a document with cases" 1 "" skip-all "$doc"
reads "policy" 0 always-sync policy "$doc"
reads "facts" 0 "own=yes,unrelated=no" facts \
	<(printf '%s\n' '# facts: own=yes,unrelated=no' '# policy: x' 'ok 1 a')
reads "verdict CASE" 0 timeout verdict gamma "$doc"
reads "verdict of a case not in the document" 1 "" verdict eta "$doc"
reads "verdict CASE: the last result naming it" 0 ok verdict a \
	<(printf '%s\n' 'ok 1 a # SKIP x' 'ok 2 a')
reads "directive CASE" 0 "TIMEOUT" directive gamma "$doc"
reads "directive CASE: without kselftest.h's blank after it" 0 "SKIP" \
	directive zeta "$doc"
reads "directive CASE: none" 0 "" directive alpha "$doc"
reads "diag CASE: the lines before its result, since the one before" 0 \
	"# stack: async_synchronize_full
# more evidence of gamma
# gamma: TIMEOUT after 10s" diag gamma "$doc"
reads "diag CASE: the first case's start at the document's" 0 \
	"# policy: always-sync
# evidence of alpha" diag alpha "$doc"
reads "diag CASE: not the lines after its result, nor the cause after it" 0 \
	"# kernel wedged by gamma" diag delta "$doc"
reads "reason CASE: a skip's, from the line before" 0 "policy always-sync" \
	reason beta "$doc"
reads "reason CASE: a failure's cause, from the line after" 0 \
	"the load did not return" reason gamma "$doc"
reads "reason CASE: from the directive when no line says it" 0 "guest died" \
	reason delta "$doc"
reads "reason CASE: none for a pass" 0 "" reason alpha "$doc"
reads "reason CASE: another case's line is not it" 0 "" reason b \
	<(printf '%s\n' '# a: SKIP x' 'ok 1 b # SKIP')
reads "wedged" 0 gamma wedged "$doc"
reads "wedged: a skip's reason is not a wedge" 1 "" wedged \
	<(printf '%s\n' '# b: SKIP kernel wedged by a' 'ok 1 b # SKIP')
reads "wedged: nothing wedged" 1 "" wedged "$tmp/boot-3.ktap"
reads "leftover: the cases not run because of a wedge" 0 epsilon leftover "$doc"
reads "leftover: in order" 0 "b
w2
c" leftover "$tmp/boot-1.ktap"
reads "leftover: a skip's reason is not one" 0 "" leftover \
	<(printf '%s\n' '# b: SKIP kernel wedged by a' 'ok 1 b # SKIP')
reads "body: without version and plan lines" 0 "# policy: skip-if-unused
ok 1 c
# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0" body "$tmp/boot-3.ktap"
reads "unknown: none in a document with each kind of line" 0 "" unknown "$doc"
reads "unknown: the lines that are not KTAP, blank ones aside" 0 "make: Entering
ok
1.. 2" unknown <(printf '%s\n' 'TAP version 13' 'make: Entering' '1..2' '' 'ok 1 a' \
		'ok' '    # sub' '1.. 2' 'not ok 2 b')
reads "records" 0 "version
plan 3
policy always-sync
result 1 alpha ok
result 2 beta skip
result 3 gamma timeout" records <(printf '%s\n' "$good")

accepts "well formed" "$good"
accepts "KTAP version 1 header" "${good/TAP version 13/KTAP version 1}"
accepts "the whole-suite SKIP" "$(printf '%s\n' 'TAP version 13' '1..0 # SKIP not root')"
rejects "no version line" "${good/TAP version 13/}"
rejects "two version lines" "TAP version 13
$good"
rejects "no plan" "${good/1..3/}"
rejects "two plans" "$good
1..3"
rejects "plan mismatch" "${good/1..3/1..4}"
rejects "misnumbered" "${good/ok 2 beta/ok 5 beta}"
rejects "empty document" ""
reads "check: says what is wrong" 1 "PASS ktap: one version line
FAIL ktap: plan 1..4 but 3 results
PASS ktap: results numbered 1..3 in order" check <(printf '%s\n' "${good/1..3/1..4}")

reads "--nested: the suite's document in the runner's" 0 "1 alpha ok
2 beta not-ok" --nested "$HEADER" verdicts "$tmp/runner.ktap"
reads "--nested: the document without its prefix" 0 "TAP version 13
1..2
# policy: always-sync
ok 1 alpha
not ok 2 beta
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0" \
	--nested "$HEADER" document "$tmp/runner.ktap"
reads "--nested: its plan" 0 "2" --nested "$HEADER" plan "$tmp/runner.ktap"
reads "--nested: its policy" 0 "always-sync" --nested "$HEADER" policy "$tmp/runner.ktap"
reads "document: as read, CRs dropped" 0 "$(tr -d '\r' <"$tmp/boot-2.ktap")" \
	document "$tmp/boot-2.ktap"
reads "--nested: check" 0 "PASS ktap: one version line
PASS ktap: plan 1..2 matches 2 results
PASS ktap: results numbered 1..2 in order" --nested "$HEADER" check "$tmp/runner.ktap"
reads "--nested: no such header, no results" 0 "" --nested "selftests: x: y" \
	verdicts "$tmp/runner.ktap"
reads "the runner's own result: a multi-word case" 0 "1 $HEADER not-ok" \
	verdicts "$tmp/runner.ktap"
reads "the runner's own result: its directive" 0 "exit=1" \
	directive "$HEADER" "$tmp/runner.ktap"

reads "merge: three boots, one plan, every case once, notes, totals; exit 1" 1 \
	"$(cat "$tmp/merged.want")" \
	merge "$tmp/boot-1.ktap" "$tmp/boot-2.ktap" "$tmp/boot-3.ktap"
reads "merge: one document is left as it is; exit 0" 0 "$(cat "$tmp/boot-3.ktap")" \
	merge "$tmp/boot-3.ktap"
reads "merge: every case skipped: exit 4" 4 "$(cat "$tmp/skipped.ktap")
# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:2 error:0" merge "$tmp/skipped.ktap"
reads "merge: a missing document: exit 2" 2 "" merge "$tmp/none.ktap"
reads "merge: no plan in the first document: exit 3" 3 "" \
	merge "$tmp/noplan.ktap" "$tmp/boot-3.ktap"

reads "--help: usage on stdout" 0 "$("$KTAP" --help)" --help
grep -q '^Usage:' <("$KTAP" --help) || fail "--help starts with Usage:"
reads "an unknown option: exit 2" 2 "" --bogus verdicts "$doc"
reads "an unknown command: exit 2" 2 "" bogus "$doc"
reads "diag without a case: exit 2" 2 "" diag
reads "two documents: exit 2" 2 "" verdicts "$doc" "$doc"
reads "an unreadable document: exit 2" 2 "" verdicts "$tmp/none.ktap"

checks_summary
