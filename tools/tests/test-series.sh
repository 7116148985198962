#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-series.sh - `make series` as a maintainer receives it: a cover letter
# (the payload's size, the verdicts per kernel) and at least four patches
# (tools/kernel/series.sh) that touch only tools/testing/selftests/
# module_async/, MAINTAINERS (the directory under MODULE SUPPORT) and the
# selftests Makefile (TARGETS), each applying with git am --whitespace=error
# to linux-source-7.2's files, the suite building after each in a copy of
# that tree's tools/ and scripts/, and the directory added the payload.
# KDIR is the cache's linux-source-7.2 built vanilla where there is one,
# else sid's 7.2 headers.  The READMEs keep their limits (the payload's at
# most 80 lines, README.md under 100).  The checkpatch stage reads the same
# patches.  Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

case ${1:-} in
'') ;;
-h | --help) echo "Usage: $PROG [--help]"; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac
need_cmd git rsync make gcc

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$("$TOOLS/kernel/fetch-source.sh" --series 7.2 | tail -n 1) ||
	die "could not fetch linux-source-7.2"
selftests=tools/testing/selftests
suite=$selftests/module_async

n=$(wc -l <"$TOP/README")
verify "the payload's README: $n lines, at most 80" test "$n" -le 80
n=$(wc -l <"$TOP/README.md")
verify "the project's README.md: $n lines, under 100" test "$n" -lt 100

if ! "$TOOLS/kernel/series.sh" --source "$src" --out "$tmp/series" >"$tmp/series.list" 2>&1; then
	fail "make series: $(tail -n 3 "$tmp/series.list")"
	checks_summary
fi
patches=("$tmp"/series/000[1-9]-*.patch)
cover=$tmp/series/0000-cover-letter.patch
verify "make series: a cover letter and ${#patches[@]} patches, at least 4" \
	test -f "$cover" -a "${#patches[@]}" -ge 4
outside=$(sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "${patches[@]}" |
	grep -vE "^($suite/|MAINTAINERS\$|$selftests/Makefile\$)" || true)
verify "the patches touch only the suite, MAINTAINERS and the selftests Makefile" \
	test -z "$outside"
lines=$(payload_files | (cd "$TOP" && xargs -0 cat) | wc -l)
verify "the cover letter gives the payload's size: $lines lines" \
	grep -q "module_async/, $lines lines in" "$cover"
verify "the cover letter gives the verdicts on four of today's kernels" \
	test "$(grep -cE '^    policy [a-z-]+; safe: [0-9]+ ok' "$cover")" -eq 4

# The suite's KDIR: linux-source-7.2 built (the tree's own build) if the
# cache has one, else Debian sid's build of it.
kdir=$(find "$(cache_dir)/build" -maxdepth 2 -path '*/7.2.*-vanilla-*/kdir' -printf '%T@ %p\n' \
	2>/dev/null | sort -rn | awk 'NR == 1 { print $2 }')
if [ -n "$kdir" ] && [ -f "$kdir/Makefile" ]; then
	log "KDIR: $kdir (linux-source-7.2 built vanilla)"
else
	kdir=$(readlink -f "$("$TOOLS/kernel/fetch-kernel.sh" --dist sid | tail -n 1)/kdir") ||
		die "could not fetch sid's kernel"
	log "KDIR: $kdir (Debian sid's 7.2 headers: no linux-source-7.2 built in the cache)"
fi

# The tree's own files the series changes, committed as they are; beside
# it, the tree's tools/ and scripts/ in hard links, the suite built there.
repo=$tmp/linux
mkdir -p "$repo/$selftests" "$tmp/tree"
cp "$src/MAINTAINERS" "$repo/"
cp "$src/$selftests/Makefile" "$repo/$selftests/"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=base -c user.email=base@localhost commit -q -m base
cp -al "$src/tools" "$src/scripts" "$tmp/tree/"

# run CMD...: CMD, its output in the build log; if it fails, the log's tail.
run()
{
	"$@" >>"$tmp/build.log" 2>&1 && return 0
	tail -n 5 "$tmp/build.log" | sed 's/^/    /'
	return 1
}

# builds: what the patches so far add builds, in the tree (its suite and
# selftests Makefile replaced, never written through a hard link): the
# kselftest way once there is a Makefile, else the modules against KDIR and
# the runner and library with -Werror against the tree's kselftest.h.
builds()
{
	local tree=$tmp/tree f objs=()

	rm -rf "${tree:?}/$suite" "$tree/$selftests/Makefile"
	cp -a "$repo/$suite" "$tree/$suite" || return 1
	cp "$repo/$selftests/Makefile" "$tree/$selftests/Makefile"
	: >"$tmp/build.log"
	if [ -f "$tree/$suite/Makefile" ]; then
		run make -C "$tree/$selftests" TARGETS=module_async KDIR="$kdir" || return 1
		[ -x "$tree/$suite/module_async" ] || { echo "    no runner"; return 1; }
	elif [ -f "$tree/$suite/modules/Makefile" ]; then
		run make -C "$tree/$suite/modules" KDIR="$kdir" || return 1
	fi
	if [ -f "$tree/$suite/modules/Makefile" ] &&
	   ! compgen -G "$tree/$suite/modules/*.ko" >/dev/null; then
		echo "    no modules"
		return 1
	fi
	[ ! -f "$tree/$suite/Makefile" ] || return 0
	for f in "$tree/$suite"/lib/*.c "$tree/$suite"/runner/*.c "$tree/$suite"/*.c; do
		[ -f "$f" ] || continue
		run gcc -O2 -Wall -Wextra -Werror -I"$tree/$selftests" -c -o "${f%.c}.o" "$f" ||
			return 1
		objs+=("${f%.c}.o")
	done
	[ ! -f "$tree/$suite/module_async.c" ] ||
		run gcc -o "$tree/$suite/module_async" "${objs[@]}"
}

for p in "${patches[@]}"; do
	if ! git -C "$repo" -c user.name=maintainer -c user.email=maintainer@localhost \
		am -q --whitespace=error "$p" >"$tmp/am.log" 2>&1; then
		fail "git am ${p##*/}: $(tail -n 3 "$tmp/am.log")"
		break
	fi
	pass "git am --whitespace=error applies ${p##*/}"
	verify "the suite builds after ${p##*/}" builds
done

payload_copy "$tmp/suite"
if diff -r "$tmp/suite" "$repo/$suite" >"$tmp/diff" 2>&1; then
	pass "the directory the series adds is the payload"
else
	fail "the directory the series adds differs from the payload: $(head -n 3 "$tmp/diff")"
fi
verify "make kselftest's TARGETS has module_async once" \
	test "$(grep -cx 'TARGETS += module_async' "$repo/$selftests/Makefile")" -eq 1
# shellcheck disable=SC2016 # awk, not shell
verify "MAINTAINERS: the directory under MODULE SUPPORT" awk -v f="F:	$suite/" '
	$0 == "MODULE SUPPORT" { inside = 1 }
	$0 == "" { inside = 0 }
	inside && $0 == f { found = 1 }
	END { exit !found }' "$repo/MAINTAINERS"

checks_summary
