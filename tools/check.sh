#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh - the project's own tests (`make check`).
#
# Stages, each timed, each with its full log in build/check/<stage>.log:
#   shell    syntax and shellcheck of every script (Python: syntax; the
#            KTAP reader and tools/vm/qmp also mypy --strict)
#   build    the runner with -Wall -Wextra -Werror; it and lib's tests
#            also with the kselftest.h of 5.10, 6.12 and 7.2
#   lib      host tests of lib/ and of the runner's KTAP output
#   compare  the verdict comparator against documents it must accept/reject
#   driver   module_async.sh: usage errors, whole-suite SKIPs with reasons
#   tools    host tests of the VM tooling (fetch, initramfs, boot)
#   add-case a case with a new function and module added on a copy of the
#            tree in four files, one reusing a function in three, and all
#            that follows (the new case in a VM of the stock kernel)
#   intree   the suite as a kselftest target of a copy of linux-source-6.1
#            (build, run_tests, install, run_kselftest.sh, O=, top level)
#            and of 7.2; make series: each patch applied to 7.2 with git
#            am and the suite built after it; the READMEs' line limits
#   via      the suite in a VM through an installed run_kselftest.sh -c
#            module_async (make series applied to the kernel's source), on
#            the stock kernel and on 7.2 built vanilla, its nested document
#            checked by the kernel's parser; on 7.2, make vm's verdicts
#   checkpatch  the kernel's checkpatch.pl --strict on every C and shell file and
#            on the kernel patch series (tools/kernel/patches/)
#   sparse   the test modules through sparse (C=2) and W=1
#   matrix   the suite in a VM on every kernel of tools/expected/verdicts
#            that vm.sh can make (Debian's stock 5.10, 6.1, 6.12 and 7.2,
#            linux-source-6.1 and -7.2 built vanilla, patched and fixed, and
#            broken variants of fixed, each differing from it), each
#            verdict compared with the table
#   reliability  tools/reliability --quick: vm.sh's bad input, a damaged
#            cache entry made again, interrupts, two runs at once
#   ktap     the matrix's KTAP documents through the kernel's KTAP parser
#   deadlock the suite with deadlocks allowed on stock 5.10, 6.1 and 7.2 and
#            on patched 6.1 and 7.2 and fixed 6.1: every unsafe case a
#            TIMEOUT with its stacks and wait-for cycle, the rest resumed in
#            fresh VMs
#   lava     make lava against make vm on the stock kernel, case by case;
#            a deadlock in a LAVA job a recorded fail, the job complete;
#            both job definitions through LAVA's job schema
#   kernels  make vm with PATCH= alone, with KERNEL=FILE KDIR=<headers>,
#            with KSRC=<a tree of one's own>, and its refusals of what cannot
#            work; the kernel booted the one built (two PATCH= kernels of
#            one size, an image that is not its vmlinux refused)
#   fresh    README.md's commands in a fresh minimal Debian root: its
#            prerequisites line, a clone, make vm, the stock verdicts
#   bench    tools/bench --quick: its table, with ratios that are numbers
# Each stage reports "N passed, N failed[, N skipped]" (or a kselftest
# "# Totals:" line); the last line sums them up.

# Every stage runs whatever the others did: a stage's failure is counted
# from its log and its exit status (run_stage), never fatal here.
set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"
readonly logdir=$TOP/build/check

readonly all_stages="shell build lib compare driver inputs tools add-case intree via checkpatch \
sparse matrix leftovers reliability ktap deadlock lava kernels fresh bench"

usage()
{
	cat <<EOF
usage: $PROG [--stage NAME]... [--help]

Runs the project's own tests and ends with "N passed, N failed, N skipped".
Stages: $all_stages
(default: all, in this order).
EOF
}

stages=
while [ $# -gt 0 ]; do
	case "$1" in
	--stage)
		case " $all_stages " in
		*" ${2:-} "*) stages="$stages $2" ;;
		*) usage_error "unknown stage '${2:-}'" ;;
		esac
		shift
		;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done
stages=${stages:-$all_stages}

total_pass=0
total_fail=0
total_skip=0

# Add a stage's counts, taken from the last summary line of its log: ours
# ("N passed, N failed[, N skipped]") or kselftest's ("# Totals: pass:..").
# A log with neither counts as one check, decided by the exit status.
count_log()
{
	local log=$1 rc=$2 line p f s

	line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed|^# Totals: pass:' "$log" |
		tail -n 1) || line=''
	if [[ "$line" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)? ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[4]:-0}
	elif [[ "$line" =~ pass:([0-9]+)\ fail:([0-9]+).*skip:([0-9]+)\ error:([0-9]+) ]]; then
		p=${BASH_REMATCH[1]} s=${BASH_REMATCH[3]}
		f=$((BASH_REMATCH[2] + BASH_REMATCH[4]))
	elif [ "$rc" -eq 0 ]; then
		p=1 f=0 s=0
	else
		p=0 f=1 s=0
	fi
	# A stage that failed without saying so still failed.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	printf '%s: %d passed, %d failed, %d skipped' "$3" "$p" "$f" "$s"
}

run_stage()
{
	local name=$1 log=$logdir/$1.log start rc
	shift

	echo "== $name" >&2
	start=$(date +%s)
	rc=0
	"$@" > "$log" 2>&1 || rc=$?
	count_log "$log" "$rc" "$name"
	printf ' (%ds, exit %d)\n' $(($(date +%s) - start)) "$rc"
	if [ "$rc" -ne 0 ]; then
		# Each failure with the first lines of its details (indented, or
		# "#   "): a log may be gone before anyone reads it.
		awk '/^(FAIL|not ok|# FAIL)|error/ { print; more = 3; next }
		     more && /^(    |\t|#   )/ { print; more--; next }
		     { more = 0 }' "$log" | head -n 40 | sed 's/^/    /'
		echo "    full log: $log"
	fi
}

stage_shell()
{
	local f shell

	passed=0 failed=0
	# Every script: by name, or by its "#!" line (tools/ktap/ktap and
	# tools/vm/qmp: Python, below).
	for f in "$TOP/module_async.sh" "$TOP/.ci/run" \
		 $(find "$TOP/tools" -type f \( -name '*.sh' -o -perm -u+x \) ! -name '*.py' |
		   sort); do
		[ -e "$f" ] || continue
		# POSIX scripts say so; the rest (and sourced files) are bash.
		case "$(head -n 1 "$f")" in
		'#!/usr/bin/python3'*) continue ;;
		'#!/bin/sh'*) shell="sh" ;;
		*) shell="bash" ;;
		esac
		if "$shell" -n "$f" && shellcheck -x "$f"; then
			pass "shellcheck ${f#"$TOP"/}"
		else
			fail "shellcheck ${f#"$TOP"/}"
		fi
	done
	for f in $(find "$TOP/tools" -name '*.py' | sort); do
		[ -e "$f" ] || continue
		if python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$f"; then
			pass "python syntax ${f#"$TOP"/}"
		else
			fail "python syntax ${f#"$TOP"/}"
		fi
	done
	# The Python programs are typed: mypy --strict, as kunit_tool is.
	for f in ktap/ktap vm/qmp expected/expected; do
		if mypy --strict --no-error-summary --cache-dir "$TOP/build/mypy" "$TOOLS/$f"; then
			pass "mypy --strict tools/$f"
		else
			fail "mypy --strict tools/$f"
		fi
	done
	checks_summary
}

# The kselftest.h generations the runner and lib's tests must build and
# pass with: ksft_exit_pass/fail return int up to 6.11, void __noreturn
# since 6.12.
readonly KSFT_SERIES="5.10 6.12 7.2"

# A subshell, with counts of its own for the reporter.
stage_build()
(
	passed=0 failed=0 series='' src='' out='' rc=0

	make -C "$TOP" OUTPUT="$TOP/build" -B "$TOP/build/module_async" || rc=$?
	for series in $KSFT_SERIES; do
		src=$("$TOOLS/kernel/fetch-source.sh" --series "$series" | tail -n 1) || return 3
		out=$TOP/build/ksft-$series
		if make -s -C "$TOP" OUTPUT="$out" KSFT_DIR="$src/tools/testing/selftests" \
			-B "$out/module_async" &&
		   make -s -C "$TOP/lib" check OUTPUT="$out/lib" RUNNER="$out/module_async" \
			KSFT_DIR="$src/tools/testing/selftests" >"$logdir/build-$series.log" 2>&1
		then
			pass "the runner (-Werror) and lib's tests with $series's kselftest.h"
		else
			fail "the runner (-Werror) and lib's tests with $series's kselftest.h" \
				"(log: $logdir/build-$series.log)"
		fi
	done
	if [ "$rc" -eq 0 ]; then
		pass "the runner with -Wall -Wextra -Werror"
	else
		fail "the runner with -Wall -Wextra -Werror"
	fi
	checks_summary
)

stage_lib()
{
	make -C "$TOP/lib" check OUTPUT="$TOP/build/lib" RUNNER="$TOP/build/module_async"
}

# counted CMD...: run a test script, show its output, and add its closing
# "N passed, N failed[, N skipped]" to $sum_pass, $sum_fail, $sum_skip (a
# script that ends without one counts as a failure); for a stage of
# several scripts, which then prints the sum.
counted()
{
	local out rc=0

	out=$(mktemp)
	"$@" 2>&1 | tee "$out" || rc=$?
	if [[ $(tail -n 1 "$out") =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]
	then
		sum_pass=$((sum_pass + BASH_REMATCH[1]))
		sum_fail=$((sum_fail + BASH_REMATCH[2]))
		sum_skip=$((sum_skip + ${BASH_REMATCH[4]:-0}))
	else
		sum_fail=$((sum_fail + 1))
	fi
	rm -f "$out"
	return "$rc"
}

sum_summary()
{
	echo "$sum_pass passed, $sum_fail failed, $sum_skip skipped"
	[ "$sum_fail" -eq 0 ]
}

# The verdict comparator's tests and the KTAP reader's, counted together.
stage_compare()
{
	local t sum_pass=0 sum_fail=0 sum_skip=0

	for t in tests/test-compare.sh ktap/test-ktap.sh ktap/test-kernelci-ids.sh; do
		counted "$TOOLS/$t" || true
	done
	sum_summary
}

stage_driver()
{
	"$TOOLS/tests/test-driver.sh" "$TOP/build/module_async"
}

stage_inputs()
{
	"$TOOLS/tests/test-inputs.sh"
}

stage_leftovers()
{
	"$TOOLS/tests/test-leftovers.sh"
}

stage_reliability()
{
	"$TOOLS/reliability" --quick
}

stage_via()
{
	"$TOOLS/tests/test-via.sh"
}

stage_deadlock()
{
	"$TOOLS/tests/test-deadlock.sh" --out "$TOP/build/check/deadlock"
}

stage_lava()
{
	"$TOOLS/tests/test-lava.sh" --out "$TOP/build/check/lava"
}

stage_kernels()
{
	"$TOOLS/tests/test-vm-kernels.sh"
}

stage_fresh()
{
	"$TOOLS/tests/test-fresh.sh"
}

stage_bench()
{
	"$TOOLS/tests/test-bench.sh" --out "$TOP/build/check/bench"
}

stage_add_case()
{
	"$TOOLS/tests/test-add-case.sh"
}

stage_tools()
{
	"$TOOLS/tests/test-tools.sh"
}

# In linux-source-6.1's selftests, then in 7.2's (its lib.mk builds the
# test modules itself, its run_tests prints no header, its kunit_parser
# reads the documents), with sid's kernel for the modules; and the suite
# as the patch series against 7.2 (make series).
stage_intree()
{
	local src72 sid sum_pass=0 sum_fail=0 sum_skip=0

	counted "$TOOLS/tests/test-intree.sh" || true
	if src72=$("$TOOLS/kernel/fetch-source.sh" --series 7.2 | tail -n 1) &&
	   sid=$("$TOOLS/kernel/fetch-kernel.sh" --dist sid | tail -n 1); then
		counted "$TOOLS/tests/test-intree.sh" --source "$src72" --kernel "$sid" \
			--out "$TOP/build/intree-7.2" --no-toplevel || true
	else
		sum_fail=$((sum_fail + 1))
	fi
	counted "$TOOLS/tests/test-series.sh" || true
	sum_summary
}

stage_checkpatch()
{
	"$TOOLS/lint.sh" --check checkpatch
}

stage_sparse()
{
	"$TOOLS/lint.sh" --check sparse
}

stage_matrix()
{
	"$TOOLS/vm/matrix.sh" --out "$TOP/build/check/matrix"
}

stage_ktap()
{
	"$TOOLS/lint.sh" --check ktap --matrix "$TOP/build/check/matrix" \
		--runner "$TOP/build/module_async"
}

mkdir -p "$logdir"
# make check fails with 1 whatever failed, missing packages too.
"$TOOLS/deps.sh" || exit 1
start_all=$(date +%s)
for stage in $stages; do
	run_stage "$stage" "stage_${stage//-/_}"
done
echo "== all stages took $(($(date +%s) - start_all))s"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
