#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-kernelci-ids.sh - "tools/ktap/ktap kernelci-ids" gives the IDs
# KernelCI's kselftest parser gives (its rule is stated in the reader), on
# the lines that rule treats differently: a runner's nested document and
# its own result line, a SKIP with and without a reason, a failure's
# directive, "[N]", "-" and characters a slug replaces, a name repeated (a
# resumed run's console).  Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

case ${1:-} in
'') ;;
-h | --help) echo "Usage: $PROG [--help]"; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

ids=("$TOOLS/ktap/ktap" kernelci-ids)

# ids_are WHAT INPUT WANT: the IDs of INPUT's lines are WANT.
ids_are()
{
	local got

	got=$(printf '%s\n' "$2" | "${ids[@]}")
	if [ "$got" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		diff <(printf '%s\n' "$3") <(printf '%s\n' "$got") | sed 's/^/    /' || true
	fi
}

ids_are "a bare document: the name alone" \
	"TAP version 13
ok 1 async_init_completes
not ok 2 async_worker_init_completes" \
	"async_init_completes pass
async_worker_init_completes fail"

ids_are "nested under run_kselftest: the parent's ID before the children's" \
	"# selftests: module_async: module_async.sh
# ok 1 async_init_completes
# ok 2 request_module_from_async_bfq # SKIP
ok 1 selftests: module_async: module_async.sh" \
	"module_async_module_async_sh_async_init_completes pass
module_async_module_async_sh_request_module_from_async_bfq skip
module_async_module_async_sh pass"

ids_are "a SKIP's reason enters the ID, a failure's directive or an XFAIL does not" \
	"ok 3 nested_async_load # SKIP would deadlock: this kernel syncs
not ok 4 nested_async_load # TIMEOUT 10s
ok 5 freeze_during_held_load # XFAIL" \
	"nested_async_load_would_deadlock_this_kernel_syncs skip
nested_async_load fail
freeze_during_held_load pass"

ids_are "slugs: [N] removed, '_-' made '__', '-' and '_' kept" \
	"ok 5 request_module_from_async_kyber-iosched
ok 6 x[12] -y # SKIP" \
	"request_module_from_async_kyber-iosched pass
x__y skip"

ids_are "a name repeated: _dup2, _dup3 (a console of boots resumed)" \
	"ok 1 alpha
ok 2 beta # SKIP
ok 1 beta
ok 1 beta" \
	"alpha pass
beta skip
beta_dup2 pass
beta_dup3 pass"

# --foreign: the IDs, over several documents, that are not a case alone.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' 'alpha 0 safe' 'beta 1 unsafe' >"$tmp/cases"
printf '%s\n' 'TAP version 13' '1..2' 'ok 1 alpha' '# beta: SKIP would deadlock here' \
	'ok 2 beta # SKIP' >"$tmp/new.ktap"
printf '%s\n' 'TAP version 13' '1..2' 'not ok 1 alpha # TIMEOUT' 'ok 2 beta # SKIP' \
	'# kernel wedged by alpha' >"$tmp/wedged.ktap"
printf '%s\n' 'TAP version 13' '1..2' 'ok 1 alpha' 'ok 2 beta # SKIP would deadlock here' \
	>"$tmp/old.ktap"
cat "$tmp/wedged.ktap" "$tmp/new.ktap" >"$tmp/resumed.ktap"
if [ -z "$("${ids[@]}" --foreign "$tmp/cases" "$tmp/new.ktap" "$tmp/wedged.ktap")" ]; then
	pass "--foreign: a reason beside the result, every verdict: no foreign ID"
else
	fail "--foreign: a reason beside the result, every verdict: no foreign ID"
fi
if [ "$("${ids[@]}" --foreign "$tmp/cases" "$tmp/old.ktap" "$tmp/old.ktap")" = \
	beta_would_deadlock_here ]; then
	pass "--foreign: a reason on the result line is a foreign ID, named once"
else
	fail "--foreign: a reason on the result line is a foreign ID, named once"
fi
if [ "$("${ids[@]}" --foreign "$tmp/cases" "$tmp/resumed.ktap")" = "alpha_dup2
beta_dup2" ]; then
	pass "--foreign: the boots of a run in one console: each case again is foreign"
else
	fail "--foreign: the boots of a run in one console: each case again is foreign"
fi

status=0
"${ids[@]}" --foreign "$tmp/none" >/dev/null 2>&1 || status=$?
if [ "$status" -eq 2 ]; then
	pass "--foreign with an unreadable case list: exit 2"
else
	fail "--foreign with an unreadable case list: exit 2 (got $status)"
fi

status=0
"${ids[@]}" --bogus >/dev/null 2>&1 || status=$?
if [ "$status" -eq 2 ]; then
	pass "an unknown option: exit 2"
else
	fail "an unknown option: exit 2 (got $status)"
fi

checks_summary
