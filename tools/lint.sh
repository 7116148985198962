#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh - the kernel's own checks on the suite, each from the kernel
# source tree (tools/kernel/fetch-source.sh) or against a kernel build:
#   checkpatch  scripts/checkpatch.pl --strict --no-tree -f on every C file,
#               header and shell script git knows of, and on each patch of
#               tools/kernel/patches/ and of `make series` as a patch;
#               every ERROR, WARNING
#               and CHECK fails, but for those tools/lint.exceptions
#               justifies, one line each, "checkpatch FILE TYPE: why" (a
#               justification that no longer matches anything fails too)
#   sparse      the test modules built for Debian's stock kernel of each
#               generation (tools/kernel/fetch-kernel.sh --dist) with C=2
#               W=1: any warning fails, and any use of a system workqueue
#               the kernel's source marks deprecated
#   ktap        the KTAP documents of the VM runs (build/check/matrix/*/
#               results.ktap, written by the matrix stage) through the
#               kernel's KTAP parser (tools/testing/kunit/kunit_parser.py):
#               no parse error, and every case of the runner's --list
#               accounted for once; every result under its case's KernelCI
#               ID (tools/ktap/ktap kernelci-ids)
# One PASS/FAIL line per check, then "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

usage()
{
	cat <<EOF
Usage: $PROG [--check NAME]... [--source DIR] [--matrix DIR] [--runner FILE]

Runs the kernel's checks on the suite; ends with "N passed, N failed".

  --check NAME    checkpatch, sparse or ktap (repeatable; default: all three)
  --source DIR    unpacked kernel source (default: tools/kernel/fetch-source.sh)
  --matrix DIR    where the VM runs' results are, DIR/<kernel>/results.ktap
                  (default: build/check/matrix)
  --runner FILE   the runner whose --list names the cases
                  (default: build/module_async)
  -h, --help      this text
EOF
}

checks=() src='' matrix=$TOP/build/check/matrix runner=$TOP/build/module_async
while [ $# -gt 0 ]; do
	case $1 in
	--check)
		need_arg "$1" $#
		case $2 in
		checkpatch | sparse | ktap) checks+=("$2") ;;
		*) usage_error "unknown check '$2'" ;;
		esac
		shift 2
		;;
	--source) need_arg "$1" $#; src=$2; shift 2 ;;
	--matrix) need_arg "$1" $#; matrix=$2; shift 2 ;;
	--runner) need_arg "$1" $#; runner=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ ${#checks[@]} -gt 0 ] || checks=(checkpatch sparse ktap)

if [ -z "$src" ]; then
	src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) || die "could not fetch the source"
fi
[ -x "$src/scripts/checkpatch.pl" ] || die "$src is not a kernel source tree"
work=$TOP/build/lint
mkdir -p "$work"


# ---- checkpatch -------------------------------------------------------------

# The files to check: C sources and headers, every shell script (by name
# or by its #! line), and the kernel patch series as a maintainer would
# receive them.
lint_files()
{
	local f

	(cd "$TOP" && git ls-files --cached --others --exclude-standard) | while IFS= read -r f; do
		case $f in
		*.c | *.h | *.sh | tools/kernel/patches/*.patch) echo "$f" ;;
		*)
			[ -f "$TOP/$f" ] &&
				head -n 1 "$TOP/$f" | grep -qE '^#!(/usr)?/bin/(env )?(ba)?sh' &&
				echo "$f"
			;;
		esac
	done
}

# The suite as the patch series `make series` writes (tools/kernel/series.sh),
# its patches' paths relative to $TOP: a maintainer checks them whole (the
# cover letter is no patch).
series_patches()
{
	"$TOOLS/kernel/series.sh" --out "$work/series" |
		sed -n "/\/0000-cover-letter\.patch\$/!s|^$TOP/||p" ||
		die "could not make the series"
}

# The justified findings, lines "checkpatch FILE TYPE: why" of
# tools/lint.exceptions (FILE a shell pattern): "FILE TYPE" for each.
justified()
{
	sed -nE 's/^checkpatch ([^ ]+) ([A-Z0-9_]+): .*/\1 \2/p' "$TOOLS/lint.exceptions"
}

# kept_by FILE TYPE: the justification ("PATTERN TYPE", of $kept) of a
# finding of TYPE in FILE, if there is one.
kept_by()
{
	local pattern ktype

	while read -r pattern ktype; do
		[ "$ktype" = "$2" ] || continue
		# shellcheck disable=SC2254 # the pattern is meant to match
		case $1 in $pattern) echo "$pattern $ktype"; return ;; esac
	done <<<"$kept"
}

# checkpatch_one FILE: checkpatch's terse findings on FILE; a patch is read
# as a patch (GIT_DIR unset: within this repository checkpatch would ask
# git about the suite's history, not the kernel's).
checkpatch_one()
{
	local mode=-f

	case $1 in *.patch) mode= ;; esac
	(cd "$TOP" && GIT_DIR=/nonexistent "$src/scripts/checkpatch.pl" --strict --no-tree \
		--quiet --terse --show-types --no-summary $mode "$1" 2>&1) || true
}

check_checkpatch()
{
	local f out finding file type seen=$work/checkpatch.seen kept why
	local levels='(ERROR|WARNING|CHECK)'

	need_cmd perl
	kept=$(justified)
	: >"$seen"
	while IFS= read -r f; do
		out=$(checkpatch_one "$f")
		local bad=0
		while IFS= read -r finding; do
			[ -n "$finding" ] || continue
			# FILE:LINE: LEVEL:TYPE: message
			file=${finding%%:*}
			type=$(printf '%s\n' "$finding" |
				sed -nE "s/^[^:]*:[0-9]+: $levels:([A-Z0-9_]+):.*/\\2/p")
			why=$(kept_by "$file" "$type")
			if [ -n "$type" ] && [ -n "$why" ]; then
				echo "# kept (lint.exceptions): $finding"
				echo "$why" >>"$seen"
				continue
			fi
			echo "# $finding"
			bad=1
		done <<<"$out"
		if [ $bad -eq 0 ]; then
			pass "checkpatch $f"
		else
			fail "checkpatch $f"
		fi
	done < <(lint_files; series_patches)
	while IFS= read -r finding; do
		[ -n "$finding" ] || continue
		if grep -qxF "$finding" "$seen"; then
			pass "checkpatch: the justification is still needed: $finding"
		else
			fail "checkpatch: lint.exceptions justifies what is not found: $finding"
		fi
	done <<<"$kept"
}

# ---- sparse -----------------------------------------------------------------

# The Debian releases whose stock kernel the test modules must build for
# cleanly: one of each kernel generation (5.10, 6.1, 6.12, 7.2).
readonly SPARSE_RELEASES="bookworm bullseye trixie sid"

# sparse_one RELEASE: the test modules against RELEASE's stock kdir, C=2 W=1.
sparse_one()
{
	local dist=$1 entry kdir log=$work/sparse-$1.log mods=$work/modules-$1 findings n
	local sources what

	entry=$("$TOOLS/kernel/fetch-kernel.sh" --dist "$dist" | tail -n 1) ||
		die "could not fetch the stock kernel of $dist"
	kdir=$(readlink -f "$entry/kdir")
	what="$dist's $(cat "$entry/krel")"
	# Kbuild writes beside an external module's sources: a copy of them.
	rm -rf "$mods"
	mkdir -p "$mods"
	(cd "$TOP/modules" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 cp -t "$mods/")
	sources=$(find "$mods" -maxdepth 1 -name '*.c' | wc -l)
	if make -C "$kdir" KBUILD_EXTMOD="$mods" KCFLAGS="$COMPAT_KCFLAGS" C=2 W=1 modules \
		>"$log" 2>&1; then
		pass "sparse: the test modules build for $what with C=2 W=1"
	else
		sed 's/^/# /' "$log"
		fail "sparse: the test modules build for $what with C=2 W=1"
	fi
	n=$(grep -c '^  CHECK ' "$log") || true
	# The kernel's own test of the checker (scripts/checker-valid.sh): 7.2
	# wants a sparse that knows __typeof_unqual__, newer than bookworm's.
	if grep -q 'specified, but .* is not available or not up to date' "$log"; then
		skip "sparse on $what: the kernel finds $(sparse --version 2>&1) too old"
	elif [ "$n" -eq "$sources" ]; then
		pass "sparse: every module source checked for $what ($n)"
	else
		fail "sparse: $n CHECK lines for $sources sources for $what"
	fi
	findings=$(grep -E ': (warning|error):' "$log") || true
	if [ -z "$findings" ]; then
		pass "sparse and the compiler (W=1) on $what: no warning"
	else
		printf '%s\n' "$findings" | sed "s|$mods/|modules/|; s/^/# /"
		fail "sparse and the compiler (W=1) on $what: $(printf '%s\n' "$findings" |
			wc -l) warnings"
	fi
	wq_deprecated "$(cat "$entry/krel")" "$mods" "$what"
}

# wq_deprecated KREL MODS WHAT: no module in MODS uses a system workqueue
# that KREL's series allocates with __WQ_DEPRECATED, read in its
# linux-source's kernel/workqueue.c (7.2: system_wq and system_unbound_wq;
# queueing on one logs "workqueue: work func ... enqueued on deprecated
# workqueue").
wq_deprecated()
{
	local series src wqs ko uses=''

	series=$(grep -oE '^[0-9]+\.[0-9]+' <<<"$1") || die "unexpected kernel release '$1'"
	src=$("$TOOLS/kernel/fetch-source.sh" --series "$series" | tail -n 1) ||
		die "could not fetch linux-source-$series"
	[ -f "$src/kernel/workqueue.c" ] || die "no kernel/workqueue.c in $src"
	wqs=$(sed -nE 's/^\s*(system_[a-z_]+) = alloc_workqueue\(.*__WQ_DEPRECATED.*/\1/p' \
		"$src/kernel/workqueue.c" | tr '\n' ' ')
	for ko in "$2"/*.ko; do
		if [ ! -f "$ko" ] || [ -z "$wqs" ]; then continue; fi
		uses+=$(nm -u "$ko" | awk -v ko="${ko##*/}" -v wqs=" $wqs" \
			'index(wqs, " " $2 " ") { printf "%s uses %s; ", ko, $2 }')
	done
	if [ -z "$uses" ]; then
		pass "the test modules use no workqueue $3 deprecates" \
			"(${wqs:-none }in $series's kernel/workqueue.c)"
	else
		fail "the test modules use workqueues $3 deprecates: ${uses%; }"
	fi
}

check_sparse()
{
	local dist

	need_cmd sparse make
	for dist in $SPARSE_RELEASES; do
		sparse_one "$dist"
	done
}

# ---- ktap -------------------------------------------------------------------

check_ktap()
{
	local cases=$work/cases k doc found=0 foreign docs=()

	need_cmd python3
	if ! "$runner" --list >"$cases" 2>/dev/null || [ ! -s "$cases" ]; then
		fail "ktap: $runner --list names the cases"
		return
	fi
	for doc in "$matrix"/*/results.ktap; do
		[ -f "$doc" ] || continue
		found=1
		k=$(basename "$(dirname "$doc")")
		if "$TOOLS/ktap/ktap-check.py" --kunit "$src/tools/testing/kunit" --cases "$cases" \
			--name "$k" "$doc" >"$work/ktap-$k.log" 2>&1; then
			pass "ktap: $k's results, read by the kernel's KTAP parser"
		else
			fail "ktap: $k's results, read by the kernel's KTAP parser"
		fi
		sed -n 's/^\(PASS\|FAIL\) /#   \1 /p; /^# .*ERROR/p' "$work/ktap-$k.log"
	done
	[ $found -eq 1 ] || fail "ktap: no $matrix/*/results.ktap (run the matrix stage first)"
	# A lab files each result under the ID KernelCI's parser derives: one
	# a case, whatever the kernel and verdict, or a case's history splits.
	[ $found -eq 1 ] || return 0
	for doc in "$matrix"/*/results.ktap "$matrix"/*/boot-*.ktap; do
		[ ! -f "$doc" ] || docs+=("$doc")
	done
	if foreign=$("$TOOLS/ktap/ktap" kernelci-ids --foreign "$cases" "${docs[@]}") &&
	   [ -z "$foreign" ]; then
		pass "ktap: every result keeps its case's KernelCI ID on every kernel"
	else
		fail "ktap: KernelCI IDs that are no case's: ${foreign:-(see above)}"
	fi
}

for c in "${checks[@]}"; do
	"check_$c"
done
checks_summary
