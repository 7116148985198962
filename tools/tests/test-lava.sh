#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-lava.sh - the suite as a LAVA job (make lava) against make vm.
#
# On Debian's stock kernel: make vm's verdicts (its KTAP, through the KTAP
# reader) and the results LAVA recorded (tools/lava/lava.sh) must agree
# case by case: ok (XFAIL too) is pass, SKIP skip, not ok (TIMEOUT and ERROR too) fail,
# and no case recorded or missed by one side only.  With deadlocks
# allowed, the case that wedges the kernel (the first "timeout" of the
# expected table's stock column with deadlocks allowed) is a recorded fail,
# no case after it is recorded, and the job still completes, within its
# timeout.  Both job definitions pass LAVA's own job schema.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly KTAP=$TOOLS/ktap/ktap LAVA=$TOOLS/lava/lava.sh LAVA_PY=$TOOLS/lava/lava.py

usage()
{
	cat <<EOF
usage: $PROG [--out DIR]

  --out DIR  results go to DIR/lava, DIR/vm and DIR/lava-deadlock
             (default: build/check/lava)

Ends with "N passed, N failed"; exit status 1 if a check failed.
EOF
}

out=$TOP/build/check/lava
while [ $# -gt 0 ]; do
	case $1 in
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check WHAT CMD...: verify, and on a failure what CMD wrote to $tmp/err.
check()
{
	local before=${failed:-0}

	verify "$@"
	[ "${failed:-0}" -eq "$before" ] || sed 's/^/    /' "$tmp/err" 2>/dev/null || true
	: >"$tmp/err"
}

# as_lava: make vm's verdicts ("<n> <case> <verdict>") as LAVA's results.
as_lava()
{
	awk '{ r = $3 == "ok" || $3 == "xfail" ? "pass" : $3 == "skip" ? "skip" : "fail"
		print $2, r }'
}

# ---- bad usage ------------------------------------------------------------

status()
{
	local rc=0

	"$@" >/dev/null 2>&1 || rc=$?
	echo "exit $rc" >"$tmp/err"
	[ "$rc" -eq 2 ]
}
check "make lava: an unknown option, exit 2" status "$LAVA" --bogus
check "make lava: --image with kernel options, exit 2" \
	status "$LAVA" --image "$tmp/none" --kernel stock
check "make lava: a bad kernel, exit 2 (vm.sh's)" status "$LAVA" --kernel bogus
check "make lava: a bad suite argument, exit 2 (the runner's)" \
	status "$LAVA" -- --case no_such_case

# ---- the job definitions against LAVA's schema ----------------------------

suite_timeout=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$TOP/settings")
"$LAVA_PY" job "$TOOLS/lava/kselftest-job.jinja2" job_name="module_async kselftest" \
	device_type=beaglebone-black kernel_url=http://lab.example/zImage kernel_type=zimage \
	modules_url=http://lab.example/modules.tar.xz \
	nfsrootfs_url=http://lab.example/rootfs.tar.xz \
	kselftest_url=http://lab.example/kselftest.tar.gz \
	test_definitions=http://lab.example/test-definitions.git boot_method=u-boot \
	suite_timeout="$suite_timeout" boot_timeout=120 >"$tmp/kselftest.yaml" 2>"$tmp/err" || true
check "the kselftest job passes LAVA's job schema" \
	"$LAVA_PY" validate "$tmp/kselftest.yaml" 2>>"$tmp/err"

# ---- make lava and make vm on the stock kernel -----------------------------

# One image for all the runs (making it is most of the cost): make lava's,
# which vm.sh --prepare made and lava.sh kept in its image file; the make
# vm side boots it as vm.sh does, by vm-run.sh.
rc=0
"$LAVA" --out "$out/lava" >"$tmp/lava" 2>"$out/lava.log" || rc=$?
echo "lava.sh exit $rc: $out/lava.log" >"$tmp/err"
check "make lava on the stock kernel: LAVA completed the job" test "$rc" -le 1

image=$out/lava/image
value()
{
	awk -v k="$1" '$1 == k { print $2 }' "$image" 2>/dev/null
}
rc=0
"$TOOLS/vm/vm-run.sh" --kernel "$(value entry)" --initrd "$(value initrd)" \
	--cases "$(value cases)" --out "$out/vm" >/dev/null 2>"$out/vm.log" || rc=$?
echo "vm-run.sh exit $rc: $out/vm.log" >"$tmp/err"
check "make vm on the same image ran" test "$rc" -le 1
"$KTAP" verdicts "$out/vm/results.ktap" 2>/dev/null | as_lava >"$tmp/vm" || true
check "the QEMU job passes LAVA's job schema" \
	"$LAVA_PY" validate "$out/lava/job.yaml" 2>>"$tmp/err"

same_results()
{
	[ -s "$tmp/vm" ] && diff "$tmp/vm" "$tmp/lava" >"$tmp/err"
}
check "LAVA recorded $(wc -l <"$tmp/vm") cases, each with make vm's verdict" same_results
while read -r case verdict; do
	got=$(awk -v c="$case" '$1 == c { print $2 }' "$tmp/lava")
	{
		echo "make vm: $verdict, LAVA: ${got:-nothing}; the console's lines naming it:"
		grep -F '"lvl": "target"' "$out/lava/lava.log" | grep -F -- "$case" |
			sed 's/.*"msg": "//; s/"}$//' | tail -n 3
	} >"$tmp/err" 2>&1
	check "$case: $verdict in LAVA too" test "$got" = "$verdict"
done <"$tmp/vm"

# ---- a deadlock in a LAVA job ---------------------------------------------

wedger=$("$TOOLS/expected/expected" --allow-deadlock column stock |
	awk '$2 == "timeout" { print $1; exit }')
rc=0
"$LAVA" --image "$image" --allow-deadlock --out "$out/lava-deadlock" >"$tmp/wedged" \
	2>"$out/lava-deadlock.log" || rc=$?
echo "lava.sh exit $rc: $out/lava-deadlock.log" >"$tmp/err"
check "deadlocks allowed: LAVA completed the job" test "$rc" -le 1
job_timeout=$("$LAVA_PY" timeout "$out/lava-deadlock/job.yaml" 2>/dev/null) || job_timeout=0
took=$(sed -n 's/^lava.sh: lava-run ended after \([0-9]*\) s.*/\1/p' "$out/lava-deadlock.log")
echo "lava-run took ${took:-?} s, the job's timeout is $job_timeout s" >"$tmp/err"
check "deadlocks allowed: the job ended within its timeout" \
	test "${took:-$job_timeout}" -lt "$job_timeout"

wedged_as_expected()
{
	awk -v w="$wedger" '
		$1 == w { seen = 1; bad += $2 != "fail"; next }
		seen { bad++ }
		END { exit !(seen && !bad) }' "$tmp/wedged" && return 0
	{
		echo "expected ${wedger:-(none in the table)} fail, no case after it recorded;" \
			"LAVA recorded:"
		cat "$tmp/wedged"
	} >"$tmp/err"
	return 1
}
check "deadlocks allowed: $wedger wedges the kernel, a fail; no case after it recorded" \
	wedged_as_expected

checks_summary
