#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh - the project's own tests (`make check`), in stages, each timed,
# its log in build/check/<stage>.log, counted by tools/ktap/ktap totals.

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"
readonly logdir=$TOP/build/check runner=$TOP/build/module_async work=$TOP/build/lint

readonly STAGES="\
shell        bash -n and shellcheck of every script, Python's syntax, mypy --strict
build        the runner with -Werror; it and lib's tests with each KSFT_SERIES kselftest.h
lib          host tests of lib/ and of the runner's KTAP output
compare      the verdict comparator and the KTAP reader
driver       module_async.sh: usage errors (runner.sh: not ok), SKIPs, knobs back after SIGKILL
inputs       bad input to make vm refused, exit 2, before any work
tools        the VM tooling (fetch, initramfs, boot)
add-case     a case added on a copy of the tree, run in a VM
intree       a kselftest target of linux-source-6.1 and 7.2; make series on 7.2
via          the suite in a VM through an installed run_kselftest.sh
checkpatch   checkpatch.pl --strict: no finding but those tools/lint.exceptions keeps
sparse       the test modules with C=2 W=1 on each generation: no warning or old workqueue
matrix       the suite on every kernel of tools/expected/verdicts (4 min, 2 VMs at once)
leftovers    what a killed run leaves behind, the next run removes
reliability  tools/reliability --quick
ktap         the matrix's documents by the kernel's KTAP parser; KernelCI's test IDs
deadlock     the suite with deadlocks allowed, resumed in fresh VMs
lava         make lava against make vm; the job definitions' schema
kernels      make vm with PATCH=, KERNEL=, KSRC= and its refusals
fresh        README.md's commands in a fresh minimal Debian root
bench        tools/bench --quick --against HEAD: its table, ratios numbers"
all_stages=$(grep -o '^[a-z-]*' <<<"$STAGES" | paste -sd' ')
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
		[[ " $all_stages " == *" ${2:-} "* ]] || usage_error "unknown stage '${2:-}'"
		stages="$stages $2"
		shift
		;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done
stages=${stages:-$all_stages}

# run_stage NAME I N: run stage NAME (the Ith of N) into its log, say its
# totals, time and exit status, and its failures (the log may be gone before
# anyone reads it).
total=(0 0 0)
run_stage()
{
	local log=$logdir/$1.log start rc=0 counts n

	echo "== $1 (stage $2 of $3)" >&2
	start=$SECONDS
	(stage "$1") >"$log" 2>&1 || rc=$?
	counts=$("$TOOLS/ktap/ktap" totals --status "$rc" "$log") || [ $? -eq 1 ] ||
		counts=$'# tools/ktap/ktap totals failed\n0 passed, 1 failed, 0 skipped'
	read -r -a n <<<"${counts##*$'\n'}"
	total=($((total[0] + n[0])) $((total[1] + n[2])) $((total[2] + n[4])))
	echo "$1: ${counts##*$'\n'} ($((SECONDS - start))s, exit $rc)"
	if [ "$rc" -ne 0 ] || [ "${n[2]}" -ne 0 ]; then
		{ sed '$d' <<<"$counts"; grep ': error: ' "$log" || true; } | head -n 40 |
			sed 's/^/    /'
		echo "    full log: $log"
	fi
}

stage()
{
	local src72 sid rc=0

	case $1 in
	shell | build | checkpatch | sparse | ktap)
		"stage_$1"
		checks_summary
		;;
	compare)
		"$TOOLS/tests/test-compare.sh" || rc=1
		"$TOOLS/ktap/test-ktap.sh" || rc=1
		return "$rc"
		;;
	intree)
		# In linux-source-6.1's selftests, then in 7.2's with sid's kernel
		# for the modules; and the suite as the patch series against 7.2.
		"$TOOLS/tests/test-intree.sh" || rc=1
		src72=$("$TOOLS/kernel/fetch-source.sh" --series 7.2 | tail -n 1) &&
			sid=$("$TOOLS/kernel/fetch-kernel.sh" --dist sid | tail -n 1) &&
			"$TOOLS/tests/test-intree.sh" --source "$src72" --kernel "$sid" \
				--out "$TOP/build/intree-7.2" --no-toplevel || rc=1
		"$TOOLS/tests/test-series.sh" || rc=1
		return "$rc"
		;;
	lib) make -j"$(nproc)" -C "$TOP/lib" check OUTPUT="$TOP/build/lib" RUNNER="$runner" ;;
	driver) "$TOOLS/tests/test-driver.sh" "$runner" ;;
	kernels) "$TOOLS/tests/test-vm-kernels.sh" ;;
	reliability) "$TOOLS/reliability" --quick ;;
	matrix) "$TOOLS/vm/matrix.sh" --out "$logdir/matrix" ;;
	*) "$TOOLS/tests/test-$1.sh" ;;
	esac
}

# shell_files: "SHELL FILE" for each of a clone's shell scripts (by name or
# #! line; POSIX ones say so, the rest and sourced files are bash's).
shell_files()
{
	clone_files | (cd "$TOP" && xargs -0 awk 'FNR == 1 {
		if (FILENAME ~ /\.sh$/ || /^#!(\/usr)?\/bin\/(env )?(ba)?sh/)
			print (/^#!\/bin\/sh/ ? "sh" : "bash"), FILENAME
		nextfile }')
}

stage_shell()
{
	local f shell

	while read -r shell f; do
		# shellcheck disable=SC2016 # the inner shell expands them
		verify "shellcheck $f" \
			sh -c '"$1" -n "$2" && shellcheck -x "$2"' sh "$shell" "$TOP/$f"
	done < <(shell_files)
	for f in $(find "$TOP/tools" -name '*.py' | sort); do
		verify "python syntax ${f#"$TOP"/}" \
			python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$f"
	done
	for f in ktap/ktap vm/vm-run expected/expected lava/lava.py; do
		verify "mypy --strict tools/$f" \
			mypy --strict --no-error-summary --cache-dir "$TOP/build/mypy" "$TOOLS/$f"
	done
}

# The kselftest.h generations the runner and lib's tests must pass with:
# ksft_exit_pass/fail return int up to 6.11, void __noreturn since 6.12.
readonly KSFT_SERIES="5.10 6.12 7.2"

stage_build()
{
	local series src out rc log

	verify "the runner with -Wall -Wextra -Werror" \
		make -C "$TOP" OUTPUT="$TOP/build" -B "$runner"
	for series in $KSFT_SERIES; do
		src=$("$TOOLS/kernel/fetch-source.sh" --series "$series" | tail -n 1) || return 3
		out=$TOP/build/ksft-$series log=$logdir/build-$series.log rc=0
		make -s -C "$TOP" OUTPUT="$out" KSFT_DIR="$src/tools/testing/selftests" \
			-B "$out/module_async" &&
			make -s -j"$(nproc)" -C "$TOP/lib" check OUTPUT="$out/lib" \
			RUNNER="$out/module_async" KSFT_DIR="$src/tools/testing/selftests" \
			>"$log" 2>&1 ||
			rc=$?
		verify "the runner (-Werror), lib's tests with $series's kselftest.h" \
			[ "$rc" -eq 0 ]
		[ "$rc" -eq 0 ] || echo "# log: $log"
	done
}

# kernel_src: the linux-source tree whose checkers the checks run, in $src.
kernel_src()
{
	src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) || die "could not fetch the source"
	[ -x "$src/scripts/checkpatch.pl" ] || die "$src is not a kernel source tree"
}

# lint_files: what checkpatch checks, relative to $TOP: C, shell, the
# kernel patches and make series' (no cover letter).
lint_files()
{
	clone_files '*.[ch]' 'tools/kernel/patches/*.patch' | tr '\0' '\n'
	shell_files | cut -d' ' -f2-
	"$TOOLS/kernel/series.sh" --out "$work/series" |
		sed -n "/\/0000-cover-letter\.patch\$/!s|^$TOP/||p" ||
		die "could not make the series"
}

stage_checkpatch()
{
	local f mode finding k why out kept seen=$work/checkpatch.seen

	kernel_src
	mapfile -t kept < <(sed -nE 's/^checkpatch ([^ ]+) ([A-Z0-9_]+): .*/\1 \2/p' \
		"$TOOLS/lint.exceptions")
	: >"$seen"
	while IFS= read -r f; do
		out='' mode=-f
		case $f in *.patch) mode= ;; esac
		# "FILE:LINE: LEVEL:TYPE: message" a finding; GIT_DIR unset: within
		# this repository checkpatch would ask git about the suite's history.
		while IFS= read -r finding; do
			why=
			for k in "${kept[@]}"; do
				# shellcheck disable=SC2053 # the pattern is meant to match
				[[ -z $why && ${finding%%:*} == ${k% *} &&
				   $finding =~ ^[^:]*:[0-9]+:\ [A-Z]+:${k#* }: ]] && why=$k
			done
			if [ -n "$why" ]; then
				echo "# kept (lint.exceptions): $finding"
				echo "$why" >>"$seen"
			elif [ -n "$finding" ]; then
				out+="# $finding"$'\n'
			fi
		done < <(cd "$TOP" && GIT_DIR=/nonexistent "$src/scripts/checkpatch.pl" --strict \
			--no-tree --quiet --terse --show-types --no-summary $mode "$f" 2>&1)
		verify "checkpatch $f" [ -z "$out" ]
		printf '%s' "$out"
	done < <(lint_files)
	for k in "${kept[@]}"; do
		verify "checkpatch: lint.exceptions' $k justifies a finding" grep -qxF "$k" "$seen"
	done
}

# A release of each kernel generation (6.1, 5.10, 6.12, 7.2).
readonly SPARSE_RELEASES="bookworm bullseye trixie sid"

# sparse_one RELEASE: the test modules against RELEASE's stock kdir, C=2 W=1;
# and none uses a system workqueue its linux-source allocates with
# __WQ_DEPRECATED (7.2: system_wq and system_unbound_wq; queueing on one warns).
sparse_one()
{
	local entry kdir log=$work/sparse-$1.log mods=$work/modules-$1 findings n sources what rc=0
	local krel wq_src wqs uses

	entry=$("$TOOLS/kernel/fetch-kernel.sh" --dist "$1" | tail -n 1) ||
		die "could not fetch the stock kernel of $1"
	kdir=$(readlink -f "$entry/kdir")
	krel=$(cat "$entry/krel")
	what="$1's $krel"
	# Kbuild writes beside an external module's sources: a copy of them.
	rm -rf "$mods"
	mkdir -p "$mods"
	clone_files modules | (cd "$TOP" && xargs -0 cp -t "$mods/")
	# A module a source, but storm.c's eight (modules/Makefile).
	sources=$(make -s --no-print-directory -C "$mods" list | wc -w)
	make -j"$(nproc)" -C "$kdir" KBUILD_EXTMOD="$mods" KCFLAGS="$COMPAT_KCFLAGS" C=2 W=1 \
		modules >"$log" 2>&1 || rc=$?
	verify "sparse: the test modules build for $what with C=2 W=1" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$log"
	n=$(grep -c '^  CHECK ' "$log") || true
	# The kernel's own test of the checker (scripts/checker-valid.sh): 7.2
	# wants a sparse that knows __typeof_unqual__, newer than bookworm's.
	if grep -q 'specified, but .* is not available or not up to date' "$log"; then
		skip "sparse on $what: the kernel finds $(sparse --version 2>&1) too old"
	else
		verify "sparse: every module's source checked for $what ($n of $sources)" \
			[ "$n" -eq "$sources" ]
	fi
	findings=$(grep -E ': (warning|error):' "$log") || true
	verify "sparse and the compiler (W=1) on $what: no warning" [ -z "$findings" ]
	[ -z "$findings" ] || printf '%s\n' "$findings" | sed "s|$mods/|modules/|; s/^/# /"
	wq_src=$("$TOOLS/kernel/fetch-source.sh" --dist "$1" | tail -n 1) ||
		die "could not fetch the linux-source of $what"
	[ -f "$wq_src/kernel/workqueue.c" ] || die "no kernel/workqueue.c in $wq_src"
	wqs=$(sed -nE 's/^\s*(system_[a-z_]+) = alloc_workqueue\(.*__WQ_DEPRECATED.*/\1/p' \
		"$wq_src/kernel/workqueue.c" | tr '\n' ' ')
	# "DIR/NAME.ko: U SYMBOL" a line.
	uses=$(nm -uA "$mods"/*.ko 2>/dev/null | awk -v wqs=" $wqs" '
		index(wqs, " " $NF " ") { sub(/:$/, "", $1); sub(/.*\//, "", $1)
					  printf "%s uses %s; ", $1, $NF }') || true
	wqs="${wqs:-none }in ${wq_src##*/}/kernel/workqueue.c"
	verify "the test modules use no workqueue $what deprecates ($wqs)${uses:+: ${uses%; }}" \
		[ -z "$uses" ]
}

stage_sparse()
{
	local dist

	for dist in $SPARSE_RELEASES; do
		sparse_one "$dist"
	done
}

stage_ktap()
{
	local cases=$work/cases k doc foreign docs=()
	local matrix=$logdir/matrix

	kernel_src
	shopt -s nullglob
	if ! "$runner" --list >"$cases" 2>/dev/null || [ ! -s "$cases" ]; then
		fail "ktap: $runner --list names the cases"
		return
	fi
	for doc in "$matrix"/*/results.ktap; do
		k=$(basename "$(dirname "$doc")")
		if "$TOOLS/ktap/ktap" kunit "$src/tools/testing/kunit/kunit_parser.py" \
			--cases "$cases" --name "$k" "$doc" >"$work/ktap-$k.log" 2>&1; then
			pass "ktap: $k's results, read by the kernel's KTAP parser"
		else
			fail "ktap: $k's results, read by the kernel's KTAP parser"
			"$TOOLS/ktap/ktap" totals "$work/ktap-$k.log" | sed '$d; s/^/# /' || true
		fi
		docs+=("$doc" "$matrix/$k"/boot-*.ktap)
	done
	if [ ${#docs[@]} -eq 0 ]; then
		fail "ktap: no $matrix/*/results.ktap (run the matrix stage first)"
		return
	fi
	# One KernelCI ID a case, whatever the kernel and verdict, or a lab
	# splits its history.
	foreign=$("$TOOLS/ktap/ktap" kernelci-ids --foreign "$cases" "${docs[@]}") ||
		foreign="(see above)"
	verify "ktap: every result keeps its case's KernelCI ID on every kernel" [ -z "$foreign" ]
	[ -z "$foreign" ] || echo "# IDs that are no case's: $foreign"
}

mkdir -p "$logdir" "$work"
# make check fails with 1 whatever failed, missing packages too.
"$TOOLS/deps.sh" || exit 1
i=0
for s in $stages; do
	i=$((i + 1))
	run_stage "$s" "$i" "$(wc -w <<<"$stages")"
done
echo "== all stages took ${SECONDS}s"
echo "${total[0]} passed, ${total[1]} failed, ${total[2]} skipped"
[ "${total[1]}" -eq 0 ]
