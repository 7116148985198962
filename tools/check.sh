#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh - the project's own tests (`make check`), in stages, each timed,
# its log in build/check/<stage>.log.  tools/ktap/ktap totals counts a
# stage's results (KTAP, its own or kselftest's) with its exit status: a
# non-zero one with no failure, or no result at all, is a failure.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"
readonly logdir=$TOP/build/check runner=$TOP/build/module_async

readonly STAGES="\
shell        bash -n and shellcheck of every script, Python's syntax, mypy --strict
build        the runner with -Werror; it and lib's tests with each KSFT_SERIES kselftest.h
lib          host tests of lib/ and of the runner's KTAP output
compare      the verdict comparator and the KTAP reader
driver       module_async.sh: usage errors, whole-suite SKIPs with reasons
inputs       bad input to make vm refused, exit 2, before any work
tools        the VM tooling (fetch, initramfs, boot)
add-case     a case added on a copy of the tree, run in a VM
intree       a kselftest target of linux-source-6.1 and 7.2; make series on 7.2
via          the suite in a VM through an installed run_kselftest.sh
checkpatch   tools/lint.sh --check checkpatch
sparse       tools/lint.sh --check sparse
matrix       the suite on every kernel of tools/expected/verdicts (7 min)
leftovers    what a killed run leaves behind, the next run removes
reliability  tools/reliability --quick
ktap         tools/lint.sh --check ktap: the matrix's documents
deadlock     the suite with deadlocks allowed, resumed in fresh VMs
lava         make lava against make vm; the job definitions' schema
kernels      make vm with PATCH=, KERNEL=, KSRC= and its refusals
fresh        README.md's commands in a fresh minimal Debian root
bench        tools/bench --quick --against HEAD: its table, ratios numbers"
all_stages=$(cut -d' ' -f1 <<<"$STAGES" | paste -sd' ')
readonly all_stages

usage()
{
	printf 'usage: %s [--stage NAME]... [--help]\nStages (default: all, in order):\n%s\n' \
		"$PROG" "$STAGES"
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

# run_stage NAME: run stage NAME into its log, say its totals, time and exit
# status, and its failures (the log may be gone before anyone reads it).
total=(0 0 0)
run_stage()
{
	local log=$logdir/$1.log start rc=0 counts n

	echo "== $1" >&2
	start=$(date +%s)
	(stage "$1") >"$log" 2>&1 || rc=$?
	counts=$("$TOOLS/ktap/ktap" totals --status "$rc" "$log") || [ $? -eq 1 ] ||
		counts=$'# tools/ktap/ktap totals failed\n0 passed, 1 failed, 0 skipped'
	read -r -a n <<<"${counts##*$'\n'}"
	total=($((total[0] + n[0])) $((total[1] + n[2])) $((total[2] + n[4])))
	echo "$1: ${counts##*$'\n'} ($(($(date +%s) - start))s, exit $rc)"
	if [ "$rc" -ne 0 ] || [ "${n[2]}" -ne 0 ]; then
		{ sed '$d' <<<"$counts"; grep ': error: ' "$log" || true; } | head -n 40 |
			sed 's/^/    /'
		echo "    full log: $log"
	fi
}

# stage NAME: the commands of stage NAME.
stage()
{
	case $1 in
	shell | build | compare | intree) "stage_$1" ;;
	lib) make -C "$TOP/lib" check OUTPUT="$TOP/build/lib" RUNNER="$runner" ;;
	driver) "$TOOLS/tests/test-driver.sh" "$runner" ;;
	deadlock | lava | bench) "$TOOLS/tests/test-$1.sh" --out "$logdir/$1" ;;
	kernels) "$TOOLS/tests/test-vm-kernels.sh" ;;
	reliability) "$TOOLS/reliability" --quick ;;
	checkpatch | sparse | ktap) "$TOOLS/lint.sh" --check "$1" ;;
	matrix) "$TOOLS/vm/matrix.sh" --out "$logdir/matrix" ;;
	*) "$TOOLS/tests/test-$1.sh" ;;
	esac
}

stage_shell()
{
	local f shell

	# Every script: by name, or by its "#!" line (Python's below).
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
		# shellcheck disable=SC2016 # the inner shell expands them
		verify "shellcheck ${f#"$TOP"/}" \
			sh -c '"$1" -n "$2" && shellcheck -x "$2"' sh "$shell" "$f"
	done
	for f in $(find "$TOP/tools" -name '*.py' | sort); do
		verify "python syntax ${f#"$TOP"/}" \
			python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$f"
	done
	# The Python programs are typed: mypy --strict, as kunit_tool is.
	for f in ktap/ktap vm/vm-run expected/expected lava/lava.py; do
		verify "mypy --strict tools/$f" \
			mypy --strict --no-error-summary --cache-dir "$TOP/build/mypy" "$TOOLS/$f"
	done
	checks_summary
}

# The kselftest.h generations the runner and lib's tests must build and
# pass with: ksft_exit_pass/fail return int up to 6.11, void __noreturn
# since 6.12.
readonly KSFT_SERIES="5.10 6.12 7.2"

stage_build()
{
	local series src out

	verify "the runner with -Wall -Wextra -Werror" \
		make -C "$TOP" OUTPUT="$TOP/build" -B "$runner"
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
	checks_summary
}

# The verdict comparator's tests and the KTAP reader's: two documents.
stage_compare()
{
	local rc=0

	"$TOOLS/tests/test-compare.sh" || rc=1
	"$TOOLS/ktap/test-ktap.sh" || rc=1
	return "$rc"
}

# In linux-source-6.1's selftests, then in 7.2's with sid's kernel for the
# modules; and the suite as the patch series against 7.2 (make series).
stage_intree()
{
	local src72 sid rc=0

	"$TOOLS/tests/test-intree.sh" || rc=1
	if src72=$("$TOOLS/kernel/fetch-source.sh" --series 7.2 | tail -n 1) &&
	   sid=$("$TOOLS/kernel/fetch-kernel.sh" --dist sid | tail -n 1); then
		"$TOOLS/tests/test-intree.sh" --source "$src72" --kernel "$sid" \
			--out "$TOP/build/intree-7.2" --no-toplevel || rc=1
	else
		rc=1
	fi
	"$TOOLS/tests/test-series.sh" || rc=1
	return "$rc"
}

mkdir -p "$logdir"
# make check fails with 1 whatever failed, missing packages too.
"$TOOLS/deps.sh" || exit 1
start_all=$(date +%s)
for s in $stages; do
	run_stage "$s"
done
echo "== all stages took $(($(date +%s) - start_all))s"
echo "${total[0]} passed, ${total[1]} failed, ${total[2]} skipped"
[ "${total[1]}" -eq 0 ]
