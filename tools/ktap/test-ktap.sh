#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-ktap.sh - tests of tools/ktap/ktap, the KTAP reader, and of
# tools/lib.sh's reporter read back by it.

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/../tests/lib-tests.sh"
test_options "$@"

# A document with each kind of line (zeta: kselftest.h's "# SKIP "), CRLF.
doc=$tmp/doc.ktap
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
	'# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:3 error:1' >"$doc"

# A kselftest runner's document with the suite's nested in it.
printf '%s\n' 'TAP version 13' '1..1' '# timeout set to 300' "# $KSFT_TEST" '# TAP version 13' \
	'# 1..2' '# # policy: always-sync' '# ok 1 alpha' '#not ok 2 beta' \
	'# # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0' \
	"not ok 1 $KSFT_TEST # exit=1" >"$tmp/runner.ktap"

# The boots of one run: boot 1 wedges in w1, runs nothing more and bails
# out; boot 2 (CRLF lines) dies in w2; boot 3 ends.
printf '%s\n' 'TAP version 13' '1..5' '# policy: always-sync' 'ok 1 a' '# evidence of w1' \
	'# w1: TIMEOUT after 10s' 'not ok 2 w1 # TIMEOUT' '# w1: TIMEOUT the load did not return' \
	'# kernel wedged by w1' '# b: not run: kernel wedged by w1' \
	'# w2: not run: kernel wedged by w1' '# c: not run: kernel wedged by w1' \
	'Bail out! kernel wedged by w1: the cases left need a fresh boot' \
	'# Planned tests != run tests (5 != 2)' \
	'# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0' >"$tmp/boot-1.ktap"
printf '%s\r\n' 'TAP version 13' '1..3' '# policy: always-sync' '# b: SKIP not here' \
	'ok 1 b # SKIP' '# console: Kernel panic' 'not ok 2 w2 # ERROR guest died' \
	'# w2: ERROR guest died' >"$tmp/boot-2.ktap"
printf '%s\n' 'TAP version 13' '1..1' '# policy: skip-if-unused' 'ok 1 c' \
	'# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0' >"$tmp/boot-3.ktap"
printf '%s\n' 'TAP version 13' '1..2' 'ok 1 a # SKIP x' 'ok 2 b # SKIP y' >"$tmp/skipped.ktap"
printf '# no plan\n' >"$tmp/noplan.ktap"

# reads WHAT WANT_RC WANT_OUTPUT ARGS...: ktap ARGS exits WANT_RC, prints WANT_OUTPUT.
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

# lines LINE...: a document of LINEs.
lines()
{
	printf '%s\n' "$@"
}

reads "verdicts: each verdict, unnamed, '- ', subtests ignored" 0 \
	"$(lines '1 alpha ok' '2 beta skip' '3 gamma timeout' '4 delta error' \
		'5 (unnamed) skip' '6 zeta skip')" verdicts "$doc"
reads "verdicts: a TIMEOUT with or without its time, an XFAIL; from stdin" 0 \
	"$(lines '1 a timeout' '2 b timeout' '3 c xfail')" verdicts \
	< <(lines '# a: waited 10.0 s' 'not ok 1 a # TIMEOUT' \
		'# a: TIMEOUT the load did not return' 'not ok 2 b # TIMEOUT 10s' 'ok 3 c # XFAIL')
reads "results: the result lines as written" 0 "$(lines 'ok 1 a' 'not ok 2 w1 # TIMEOUT')" \
	results "$tmp/boot-1.ktap"
reads "plan" 0 6 plan "$doc"
reads "plan: none" 1 "" plan "$tmp/noplan.ktap"
reads "skip-all: the reason of a whole-document SKIP" 0 "must be run as root" \
	skip-all <(lines 'TAP version 13' '1..0 # SKIP must be run as root')
reads "skip-all: none in a document with cases" 1 "" skip-all "$doc"
reads "policy" 0 always-sync policy "$doc"
reads "facts" 0 "own=yes,unrelated=no" facts <(lines '# facts: own=yes,unrelated=no' 'ok 1 a')
reads "kernel: the runner's line, not the kernel log's" 0 "7.2.13 build-id ab12" kernel \
	<(lines '# kernel: Linux version 7.2' '# kernel: 7.2.13 build-id ab12' 'ok 1 a')
reads "verdict CASE" 0 timeout verdict gamma "$doc"
reads "verdict of a case not in the document" 1 "" verdict eta "$doc"
reads "verdict CASE: the last result naming it" 0 ok verdict a <(lines 'ok 1 a # SKIP x' 'ok 2 a')
reads "directive CASE" 0 "TIMEOUT" directive gamma "$doc"
reads "directive CASE: without kselftest.h's blank after it" 0 "SKIP" directive zeta "$doc"
reads "directive CASE: none" 0 "" directive alpha "$doc"
reads "diag CASE: the lines before its result, since the one before" 0 \
	"$(lines '# stack: async_synchronize_full' '# more evidence of gamma' \
		'# gamma: TIMEOUT after 10s')" diag gamma "$doc"
reads "diag CASE: the first case's start at the document's" 0 \
	"$(lines '# policy: always-sync' '# evidence of alpha')" diag alpha "$doc"
reads "diag CASE: not the lines after its result, nor the cause after it" 0 \
	"# kernel wedged by gamma" diag delta "$doc"
reads "reason CASE: a skip's, from the line before" 0 "policy always-sync" reason beta "$doc"
reads "reason CASE: a failure's cause, from the line after" 0 "the load did not return" \
	reason gamma "$doc"
reads "reason CASE: from the directive when no line says it" 0 "guest died" reason delta "$doc"
reads "reason CASE: none for a pass" 0 "" reason alpha "$doc"
reads "reason CASE: another case's line is not it" 0 "" reason b \
	<(lines '# a: SKIP x' 'ok 1 b # SKIP')
reads "wedged" 0 gamma wedged "$doc"
lines '# b: SKIP kernel wedged by a' 'ok 1 b # SKIP' >"$tmp/skip-wedged.ktap"
reads "wedged: a skip's reason is not a wedge" 1 "" wedged "$tmp/skip-wedged.ktap"
reads "leftover: a skip's reason is not one" 0 "" leftover "$tmp/skip-wedged.ktap"
reads "wedged: nothing wedged" 1 "" wedged "$tmp/boot-3.ktap"
reads "leftover: the cases not run because of a wedge, in order" 0 "$(lines b w2 c)" \
	leftover "$tmp/boot-1.ktap"
reads "body: without version and plan lines" 0 "$(sed 1,2d "$tmp/boot-3.ktap")" \
	body "$tmp/boot-3.ktap"
reads "unknown: none in a document with each kind of line" 0 "" unknown "$doc"
reads "unknown: the lines that are not KTAP, blank ones aside" 0 \
	"$(lines 'make: Entering' ok '1.. 2')" unknown <(lines 'TAP version 13' 'make: Entering' \
		'1..2' '' 'ok 1 a' 'ok' '    # sub' '1.. 2' 'not ok 2 b')
reads "records" 0 "$(lines version 'plan 2' 'policy x' 'result 1 a ok' 'result 2 b skip')" \
	records <(lines 'TAP version 13' '1..2' '# policy: x' 'ok 1 a' 'ok 2 b # SKIP y')

good=$(lines 'TAP version 13' '1..3' 'ok 1 alpha' 'ok 2 beta # SKIP x' 'not ok 3 gamma')
# checks WHAT RC DOCUMENT: ktap check of DOCUMENT exits RC (its output: the test below).
checks()
{
	local rc=0

	"$KTAP" check <(lines "$3") >/dev/null || rc=$?
	verify "check $1" [ "$rc" = "$2" ]
}

checks "accepts KTAP version 1" 0 "${good/TAP version 13/KTAP version 1}"
checks "accepts the whole-suite SKIP" 0 "$(lines 'TAP version 13' '1..0 # SKIP not root')"
checks "rejects no version line" 1 "${good/TAP version 13/}"
checks "rejects two version lines" 1 "$(lines 'TAP version 13' "$good")"
checks "rejects no plan" 1 "${good/1..3/}"
checks "rejects two plans" 1 "$(lines "$good" 1..3)"
checks "rejects misnumbered" 1 "${good/ok 2 beta/ok 5 beta}"
checks "rejects an empty document" 1 ""
reads "check: says what is wrong after the check" 1 "$(lines 'KTAP version 1' \
	'ok 1 ktap: one version line' 'not ok 2 ktap: one plan, 1..3' '#   plans: 1..4' \
	'ok 3 ktap: results numbered 1..3 in order' '1..3')" check <(lines "${good/1..3/1..4}")

reads "--nested: the suite's document in the runner's" 0 "$(lines '1 alpha ok' '2 beta not-ok')" \
	--nested "$KSFT_TEST" verdicts "$tmp/runner.ktap"
reads "--nested: the document without its prefix" 0 "$(lines 'TAP version 13' '1..2' \
	'# policy: always-sync' 'ok 1 alpha' 'not ok 2 beta' \
	'# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0')" \
	--nested "$KSFT_TEST" document "$tmp/runner.ktap"
reads "--nested: no such header, no results" 0 "" --nested "x: y" verdicts "$tmp/runner.ktap"
reads "document: as read, CRs dropped" 0 "$(tr -d '\r' <"$tmp/boot-2.ktap")" \
	document "$tmp/boot-2.ktap"
reads "the runner's own result: a multi-word case, its directive" 0 "exit=1" \
	directive "$KSFT_TEST" "$tmp/runner.ktap"

reads "merge: three boots, one plan, every case once, notes, totals; exit 1" 1 "$(lines \
	'TAP version 13' '1..5' '# policy: always-sync' 'ok 1 a' '# evidence of w1' \
	'# w1: TIMEOUT after 10s' 'not ok 2 w1 # TIMEOUT' '# w1: TIMEOUT the load did not return' \
	'# kernel wedged by w1' '# resumed in a fresh VM (boot 2) after w1 wedged the kernel' \
	'# boot 2 policy: always-sync' '# b: SKIP not here' 'ok 3 b # SKIP' \
	'# console: Kernel panic' 'not ok 4 w2 # ERROR guest died' '# w2: ERROR guest died' \
	'# resumed in a fresh VM (boot 3) after the guest died in w2' \
	'# boot 3 policy: skip-if-unused' 'ok 5 c' \
	'# Totals: pass:2 fail:1 xfail:0 xpass:0 skip:1 error:1')" \
	merge "$tmp/boot-1.ktap" "$tmp/boot-2.ktap" "$tmp/boot-3.ktap"
reads "merge: one document is left as it is; exit 0" 0 "$(cat "$tmp/boot-3.ktap")" \
	merge "$tmp/boot-3.ktap"
verify "merge: the last boot's Bail out! is kept (no boot ran the rest)" \
	grep -q '^Bail out! kernel wedged by w1' <("$KTAP" merge "$tmp/boot-1.ktap")
reads "unknown: Bail out! is KTAP" 0 "" unknown "$tmp/boot-1.ktap"
reads "merge: every case skipped: exit 4" 4 "$(cat "$tmp/skipped.ktap")
# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:2 error:0" merge "$tmp/skipped.ktap"
reads "merge: no plan in the first document: exit 3" 3 "" \
	merge "$tmp/noplan.ktap" "$tmp/boot-3.ktap"

# kernelci-ids: the lines KernelCI's rule treats differently.
reads "kernelci-ids: nested under run_kselftest, the parent's ID after the children's" 0 \
	"$(lines 'module_async_module_async_sh_alpha pass' 'module_async_module_async_sh_b_x skip' \
		'module_async_module_async_sh pass' 'async_init fail')" kernelci-ids \
	<(lines "# $KSFT_TEST" '# ok 1 alpha' '# ok 2 b # SKIP x' "ok 1 $KSFT_TEST" \
		'not ok 2 async_init')
reads "kernelci-ids: a SKIP's reason enters the ID, a failure's directive or an XFAIL not" 0 \
	"$(lines 'n_would_deadlock_here skip' 'n fail' 'f pass')" kernelci-ids \
	<(lines 'ok 3 n # SKIP would deadlock: here' 'not ok 4 n # TIMEOUT 10s' 'ok 5 f # XFAIL')
reads "kernelci-ids: [N] removed, '_-' made '__', '-' and '_' kept; _dup2, _dup3" 0 \
	"$(lines 'kyber-iosched pass' 'x__y skip' 'a pass' 'a_dup2 pass' 'a_dup3 pass')" \
	kernelci-ids <(lines 'ok 5 kyber-iosched' 'ok 6 x[12] -y # SKIP' 'ok 1 a' 'ok 1 a' 'ok 2 a')
lines 'alpha 0 safe' 'beta 1 unsafe' >"$tmp/cases"
lines 'TAP version 13' '1..2' 'ok 1 alpha' '# beta: SKIP would deadlock' 'ok 2 beta # SKIP' \
	>"$tmp/new.ktap"
lines 'TAP version 13' '1..2' 'not ok 1 alpha # TIMEOUT' 'ok 2 beta # SKIP' >"$tmp/wedged.ktap"
reads "kernelci-ids --foreign: a reason beside the result, every verdict: none" 0 "" \
	kernelci-ids --foreign "$tmp/cases" "$tmp/new.ktap" "$tmp/wedged.ktap"
lines 'TAP version 13' '1..2' 'ok 1 alpha' 'ok 2 beta # SKIP x' >"$tmp/old.ktap"
reads "kernelci-ids --foreign: a reason on the result line, named once" 0 beta_x \
	kernelci-ids --foreign "$tmp/cases" "$tmp/old.ktap" "$tmp/old.ktap"
reads "kernelci-ids --foreign: a run's boots in one console: each case again" 0 \
	"$(lines alpha_dup2 beta_dup2)" kernelci-ids --foreign "$tmp/cases" \
	<(cat "$tmp/wedged.ktap" "$tmp/new.ktap")

# totals: every document of a log (the reporter's, kselftest's).
lines 'make: x' 'KTAP version 1' 'ok 1 a' 'not ok 2 b' '# why b' '# more' 'ok 3 c # SKIP x' \
	'    not ok 1 sub' '1..3' '1 passed, 1 failed, 1 skipped' \
	'TAP version 13' '1..0 # SKIP no' \
	'TAP version 13' '1..2' 'ok 1 d # XFAIL' 'not ok 2 e # TIMEOUT' 'ok 3 f' >"$tmp/log"
reads "totals: every document's results, the failures with their details" 1 "$(lines \
	'not ok 2 b' '# why b' '# more' 'not ok 2 e # TIMEOUT' '3 passed, 2 failed, 2 skipped')" \
	totals "$tmp/log"
reads "totals --status: a failure without a failed result" 1 "$(lines \
	'# no failure reported, yet exit 3' '1 passed, 1 failed, 0 skipped')" \
	totals --status 3 <(lines 'ok 1 a')
reads "totals --status 0: no result at all is a failure" 1 "$(lines '# no result' \
	'0 passed, 1 failed, 0 skipped')" totals --status 0 "$tmp/noplan.ktap"
reads "totals --status 0: a pass" 0 "1 passed, 0 failed, 0 skipped" \
	totals --status 0 <(lines 'ok 1 a')

# The reporter of tools/lib.sh, read back.
# shellcheck disable=SC2016 # the inner shell expands them
bash -c '. "$1"; echo "# a log line"; pass a; fail "b: why"; echo "# detail"
	skip "c: no root"; skip d; checks_summary' sh "$TOOLS/lib.sh" >"$tmp/reporter" || true
reads "the reporter: well-formed KTAP" 0 "$(lines 'KTAP version 1' \
	'ok 1 ktap: one version line' 'ok 2 ktap: one plan, 1..4' \
	'ok 3 ktap: results numbered 1..4 in order' '1..3')" check "$tmp/reporter"
reads "the reporter: its verdicts" 0 "$(lines '1 a ok' '2 b: why not-ok' '3 c skip' \
	'4 d skip')" verdicts "$tmp/reporter"
reads "the reporter: a skip's reason" 0 "no root" reason c "$tmp/reporter"
verify "the reporter: the closing line last" [ "$(tail -n 1 "$tmp/reporter")" = \
	"1 passed, 1 failed, 2 skipped" ]
reads "the reporter: totals agree, details after a failure" 1 "$(lines 'not ok 2 b: why' \
	'# detail' '1 passed, 1 failed, 2 skipped')" totals "$tmp/reporter"

reads "--help: usage on stdout" 0 "$("$KTAP" --help | grep -A 1000 '^usage: ktap')" --help
# Bad usage: exit 2, nothing read.
for bad in "--bogus verdicts $doc" "bogus $doc" diag "verdicts $doc $doc" "verdicts $tmp/none" \
	"merge $tmp/none" "kernelci-ids --foreign $tmp/none" "kernelci-ids --bogus" \
	"totals --status x $doc" "--nested x merge $doc" "kunit $tmp/none $doc"; do
	# shellcheck disable=SC2086 # the words of a command line
	reads "bad usage, exit 2: ktap ${bad//$tmp\//}" 2 "" $bad
done

checks_summary
