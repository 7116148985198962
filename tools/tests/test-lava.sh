#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-lava.sh - make lava against make vm on one stock image: each case's
# verdict; with deadlocks allowed the first wedging case fails, none after
# it recorded, within the job's timeout.  The job templates pass LAVA's
# schema; bad usage exits 2.
#
# usage: test-lava.sh [--out DIR]   (default: build/check/lava)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
readonly LAVA=$TOOLS/lava/lava.sh LAVA_PY=$TOOLS/lava/lava.py

out=$TOP/build/check/lava
test_options "$@"
mkdir -p "$out"

# refused WHAT ARG...: make lava ARGs exits 2.
refused()
{
	run_to "$tmp/err" "$LAVA" "${@:2}"
	echo "(exit $rc)" >>"$tmp/err"
	check "make lava: $1, exit 2" test "$rc" -eq 2
}
refused "an unknown option" --bogus
refused "--image with kernel options" --image "$tmp/none" --kernel stock
refused "a bad kernel (vm.sh's)" --kernel bogus
refused "a bad suite argument (the runner's)" -- --case no_such_case
refused "a --ksrc that is no tree" --ksrc /nonexistent
check "make lava: --ksrc is vm.sh's option (make lava KSRC=)" grep -q '^vm.sh: --ksrc' "$tmp/err"

"$LAVA_PY" job "$TOOLS/lava/kselftest-job.jinja2" job_name="module_async kselftest" \
	device_type=beaglebone-black kernel_url=http://lab.example/zImage kernel_type=zimage \
	modules_url=http://lab.example/modules.tar.xz \
	nfsrootfs_url=http://lab.example/rootfs.tar.xz \
	kselftest_url=http://lab.example/kselftest.tar.gz \
	test_definitions=http://lab.example/test-definitions.git boot_method=u-boot \
	suite_timeout=300 boot_timeout=120 >"$tmp/kselftest.yaml" \
	2>"$tmp/schema" || true

# One image for all the runs, make lava's, booted by vm-run as make vm does.
rc=0
"$LAVA" --out "$out/lava" >"$tmp/lava" 2>"$out/lava.log" || rc=$?
details=$out/lava.log check "make lava on the stock kernel: LAVA completed the job" \
	test "$rc" -le 1

image=$out/lava/image
value()
{
	awk -v k="$1" '$1 == k { print $2 }' "$image" 2>/dev/null
}
run_to "$out/vm.log" "$TOOLS/vm/vm-run" --kernel "$(value entry)" \
	--initrd "$(value initrd)" --cases "$(value cases)" --out "$out/vm"
details=$out/vm.log check "make vm on the same image ran" test "$rc" -le 1
details=$tmp/schema check "the kselftest and the QEMU jobs pass LAVA's job schema" \
	"$LAVA_PY" validate "$tmp/kselftest.yaml" "$out/lava/job.yaml" 2>>"$tmp/schema"

"$KTAP" verdicts "$out/vm/results.ktap" 2>/dev/null | lab_results >"$tmp/vm" || true
diff "$tmp/vm" "$tmp/lava" >"$tmp/err" || true
check "LAVA recorded $(wc -l <"$tmp/vm") cases, each with make vm's verdict" \
	test -s "$tmp/vm" -a ! -s "$tmp/err"

wedger=$("$TOOLS/expected/expected" --allow-deadlock column stock |
	awk '$2 == "timeout" { print $1; exit }')
rc=0
"$LAVA" --image "$image" --allow-deadlock --out "$out/lava-deadlock" >"$tmp/wedged" \
	2>"$out/lava-deadlock.log" || rc=$?
details=$out/lava-deadlock.log check "deadlocks allowed: LAVA completed the job" \
	test "$rc" -le 1
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
		END { exit !(seen && !bad) }' "$tmp/wedged"
}
details=$tmp/wedged check \
	"deadlocks allowed: ${wedger:-(none in the table)} wedges the kernel: a fail, the last" \
	wedged_as_expected

checks_summary
