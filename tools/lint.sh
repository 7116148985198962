#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh - the kernel's own checks on the suite, from its source
# (fetch-source.sh) or against a kernel build:
#   checkpatch  checkpatch.pl --strict on every C, header and shell file, on
#               tools/kernel/patches/ and `make series`: no finding but those
#               lint.exceptions justifies, and no justification unused
#   sparse      the test modules built with C=2 W=1 for each generation's
#               stock kernel: no warning, no deprecated system workqueue
#   ktap        the matrix stage's documents through the kernel's KTAP
#               parser; every result under its case's KernelCI ID

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

readonly CHECKS="checkpatch sparse ktap"

usage()
{
	echo "usage: $PROG [--check NAME]... [--help]   (NAME: $CHECKS; default all)"
}

checks=
while [ $# -gt 0 ]; do
	case $1 in
	--check)
		case " $CHECKS " in
		*" ${2:-} "*) checks+=" $2" ;;
		*) usage_error "unknown check '${2:-}'" ;;
		esac
		shift 2
		;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done

src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1) || die "could not fetch the source"
[ -x "$src/scripts/checkpatch.pl" ] || die "$src is not a kernel source tree"
work=$TOP/build/lint
mkdir -p "$work"

# ---- checkpatch -------------------------------------------------------------

# lint_files: what checkpatch checks, relative to $TOP (shell scripts by
# name or #! line; no cover letter).
lint_files()
{
	local f shebang='^#!(/usr)?/bin/(env )?(ba)?sh'

	(cd "$TOP" && git ls-files --cached --others --exclude-standard) | while IFS= read -r f; do
		case $f in
		*.c | *.h | *.sh | tools/kernel/patches/*.patch) echo "$f" ;;
		*)
			if head -n 1 "$TOP/$f" 2>/dev/null | grep -qE "$shebang"; then
				echo "$f"
			fi
			;;
		esac
	done
	"$TOOLS/kernel/series.sh" --out "$work/series" |
		sed -n "/\/0000-cover-letter\.patch\$/!s|^$TOP/||p" ||
		die "could not make the series"
}

# kept_by FILE TYPE: the "PATTERN TYPE" (justified) justifying TYPE in FILE.
kept_by()
{
	local pattern type

	while read -r pattern type; do
		# shellcheck disable=SC2254 # the pattern is meant to match
		case $1 in
		$pattern) [ "$type" != "$2" ] || echo "$pattern $type" ;;
		esac
	done < <(justified)
}

# justified: "PATTERN TYPE" of each "checkpatch PATTERN TYPE: why" line.
justified()
{
	sed -nE 's/^checkpatch ([^ ]+) ([A-Z0-9_]+): .*/\1 \2/p' "$TOOLS/lint.exceptions"
}

check_checkpatch()
{
	local f mode finding why out seen=$work/checkpatch.seen

	need_cmd perl
	: >"$seen"
	while IFS= read -r f; do
		out='' mode=-f
		case $f in *.patch) mode= ;; esac
		# "FILE:LINE: LEVEL:TYPE: message" a finding; GIT_DIR unset: within
		# this repository checkpatch would ask git about the suite's history.
		while IFS= read -r finding; do
			why=
			if [[ $finding =~ ^[^:]*:[0-9]+:\ [A-Z]+:([A-Z0-9_]+): ]]; then
				why=$(kept_by "${finding%%:*}" "${BASH_REMATCH[1]}" | sed -n 1p)
			fi
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
	while read -r finding; do
		verify "checkpatch: lint.exceptions justifies what is found: $finding" \
			grep -qxF "$finding" "$seen"
	done < <(justified)
}

# ---- sparse -----------------------------------------------------------------

# A release of each kernel generation (6.1, 5.10, 6.12, 7.2).
readonly SPARSE_RELEASES="bookworm bullseye trixie sid"

# sparse_one RELEASE: the test modules against RELEASE's stock kdir, C=2 W=1.
sparse_one()
{
	local entry kdir log=$work/sparse-$1.log mods=$work/modules-$1 findings n sources what

	entry=$("$TOOLS/kernel/fetch-kernel.sh" --dist "$1" | tail -n 1) ||
		die "could not fetch the stock kernel of $1"
	kdir=$(readlink -f "$entry/kdir")
	what="$1's $(cat "$entry/krel")"
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
		fail "sparse: the test modules build for $what with C=2 W=1"
		sed 's/^/# /' "$log"
	fi
	n=$(grep -c '^  CHECK ' "$log") || true
	# The kernel's own test of the checker (scripts/checker-valid.sh): 7.2
	# wants a sparse that knows __typeof_unqual__, newer than bookworm's.
	if grep -q 'specified, but .* is not available or not up to date' "$log"; then
		skip "sparse on $what: the kernel finds $(sparse --version 2>&1) too old"
	else
		verify "sparse: every module source checked for $what ($n of $sources)" \
			[ "$n" -eq "$sources" ]
	fi
	findings=$(grep -E ': (warning|error):' "$log") || true
	verify "sparse and the compiler (W=1) on $what: no warning" [ -z "$findings" ]
	[ -z "$findings" ] || printf '%s\n' "$findings" | sed "s|$mods/|modules/|; s/^/# /"
	wq_deprecated "$(cat "$entry/krel")" "$mods" "$what"
}

# wq_deprecated KREL MODS WHAT: no module in MODS uses a system workqueue
# KREL's linux-source allocates with __WQ_DEPRECATED (7.2: system_wq and
# system_unbound_wq; queueing on one logs a warning).
wq_deprecated()
{
	local series wq_src wqs ko uses='' what

	series=$(grep -oE '^[0-9]+\.[0-9]+' <<<"$1") || die "unexpected kernel release '$1'"
	wq_src=$("$TOOLS/kernel/fetch-source.sh" --series "$series" | tail -n 1) ||
		die "could not fetch linux-source-$series"
	[ -f "$wq_src/kernel/workqueue.c" ] || die "no kernel/workqueue.c in $wq_src"
	wqs=$(sed -nE 's/^\s*(system_[a-z_]+) = alloc_workqueue\(.*__WQ_DEPRECATED.*/\1/p' \
		"$wq_src/kernel/workqueue.c" | tr '\n' ' ')
	for ko in "$2"/*.ko; do
		if [ ! -f "$ko" ] || [ -z "$wqs" ]; then continue; fi
		uses+=$(nm -u "$ko" | awk -v ko="${ko##*/}" -v wqs=" $wqs" \
			'index(wqs, " " $2 " ") { printf "%s uses %s; ", ko, $2 }')
	done
	what="the test modules use no workqueue $3 deprecates"
	verify "$what (${wqs:-none }in $series's kernel/workqueue.c)${uses:+: ${uses%; }}" \
		[ -z "$uses" ]
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
	local cases=$work/cases k doc f foreign docs=()
	local matrix=$TOP/build/check/matrix runner=$TOP/build/module_async

	need_cmd python3
	if ! "$runner" --list >"$cases" 2>/dev/null || [ ! -s "$cases" ]; then
		fail "ktap: $runner --list names the cases"
		return
	fi
	for doc in "$matrix"/*/results.ktap; do
		[ -f "$doc" ] || continue
		k=$(basename "$(dirname "$doc")")
		if "$TOOLS/ktap/ktap-check.py" --kunit "$src/tools/testing/kunit" --cases "$cases" \
			--name "$k" "$doc" >"$work/ktap-$k.log" 2>&1; then
			pass "ktap: $k's results, read by the kernel's KTAP parser"
		else
			fail "ktap: $k's results, read by the kernel's KTAP parser"
			"$TOOLS/ktap/ktap" totals "$work/ktap-$k.log" | sed '$d; s/^/# /' || true
		fi
		for f in "$doc" "$matrix/$k"/boot-*.ktap; do
			[ ! -f "$f" ] || docs+=("$f")
		done
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

for c in ${checks:-$CHECKS}; do
	"check_$c"
done
checks_summary
