#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-kernelci-ids.sh - tools/ktap/kernelci-ids gives the IDs KernelCI's
# kselftest parser gives (its rule is stated in kernelci-ids), on the
# lines that rule treats differently: a runner's nested document and its
# own result line, a SKIP with and without a reason, a failure's
# directive, "[N]", "_-" and characters a slug replaces.
# Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

case ${1:-} in
'') ;;
-h | --help) echo "Usage: $PROG [--help]"; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

ids=$TOOLS/ktap/kernelci-ids

# ids_are WHAT INPUT WANT: the IDs of INPUT's lines are WANT.
ids_are()
{
	local got

	got=$(printf '%s\n' "$2" | "$ids")
	if [ "$got" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		diff <(printf '%s\n' "$3") <(printf '%s\n' "$got") | sed 's/^/    /'
	fi
}

ids_are "a bare document: the name alone, with a leading _ for no prefix" \
	"ok 1 async_init_completes
not ok 2 async_worker_init_completes" \
	"_async_init_completes pass
_async_worker_init_completes fail"

ids_are "nested under run_kselftest: the prefix, and the runner's own line trimmed" \
	"# selftests: module_async: module_async.sh
# ok 1 async_init_completes
# ok 2 request_module_from_async_bfq # SKIP
ok 1 selftests: module_async: module_async.sh" \
	"module_async_module_async_sh_async_init_completes pass
module_async_module_async_sh_request_module_from_async_bfq skip
module_async_module_async_sh pass"

ids_are "a SKIP's reason enters the ID, a failure's directive does not" \
	"ok 3 nested_async_load # SKIP would deadlock: this kernel syncs
not ok 4 nested_async_load # TIMEOUT 10s" \
	"_nested_async_load_would_deadlock_this_kernel_syncs skip
_nested_async_load fail"

ids_are "an XFAIL enters the ID, a pass" \
	"ok 7 freeze_during_held_load # XFAIL" \
	"_freeze_during_held_load_XFAIL pass"

ids_are "slugs: [N] removed, '_-' made '_', '-' and '_' kept" \
	"ok 5 request_module_from_async_kyber-iosched
ok 6 x[12] -y # SKIP" \
	"_request_module_from_async_kyber-iosched pass
_x_y skip"

# --foreign: the IDs, over several documents, that are not a case alone.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' 'alpha 0 safe' 'beta 1 unsafe' >"$tmp/cases"
printf '%s\n' 'TAP version 13' '1..2' 'ok 1 alpha' '# beta: SKIP would deadlock here' \
	'ok 2 beta # XFAIL' '# beta: XFAIL a known failure' >"$tmp/new.ktap"
printf '%s\n' 'TAP version 13' '1..2' 'not ok 1 alpha # TIMEOUT 10s' 'ok 2 beta # SKIP' \
	'# kernel wedged by alpha' >"$tmp/wedged.ktap"
printf '%s\n' 'TAP version 13' '1..2' 'ok 1 alpha' 'ok 2 beta # SKIP would deadlock here' \
	'ok 3 beta # SKIP would deadlock here' >"$tmp/old.ktap"
if [ -z "$("$ids" --foreign "$tmp/cases" "$tmp/new.ktap" "$tmp/wedged.ktap")" ]; then
	pass "--foreign: a reason beside the result, every verdict (XFAIL too): no foreign ID"
else
	fail "--foreign: a reason beside the result, every verdict (XFAIL too): no foreign ID"
fi
if [ "$("$ids" --foreign "$tmp/cases" "$tmp/new.ktap" "$tmp/old.ktap")" = \
	_beta_would_deadlock_here ]; then
	pass "--foreign: a reason on the result line is a foreign ID, named once"
else
	fail "--foreign: a reason on the result line is a foreign ID, named once"
fi

status=0
"$ids" --foreign "$tmp/none" >/dev/null 2>&1 || status=$?
if [ "$status" -eq 2 ]; then
	pass "--foreign with an unreadable case list: exit 2"
else
	fail "--foreign with an unreadable case list: exit 2 (got $status)"
fi

status=0
"$ids" --bogus >/dev/null 2>&1 || status=$?
if [ "$status" -eq 2 ]; then
	pass "an unknown option: exit 2"
else
	fail "an unknown option: exit 2 (got $status)"
fi

checks_summary
