#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-series.sh - `make series` as a maintainer receives it: a cover letter
# (the payload's size, the verdicts per kernel) and at least four patches
# touching only the suite, MAINTAINERS and the selftests Makefile, each
# applying with git am --whitespace=error to linux-source-7.2's files and
# the suite building after each; the directory added is the payload.  And
# the READMEs keep their limits.  (The checkpatch stage reads the patches.)
#
# usage: test-series.sh

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
test_options "$@"
need_cmd git rsync make gcc

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

kdir=$(readlink -f "$("$TOOLS/kernel/fetch-kernel.sh" --dist sid | tail -n 1)/kdir") ||
	die "could not fetch sid's kernel"

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

# builds: what the patches so far add builds, in the tree (its suite and
# selftests Makefile replaced, never written through a hard link) against
# sid's 7.2: the kselftest way once there is a Makefile, else the modules
# and the runner and library with -Werror against the tree's kselftest.h.
builds()
{
	local tree=$tmp/tree f objs=()

	rm -rf "${tree:?}/$suite" "$tree/$selftests/Makefile"
	cp -a "$repo/$suite" "$tree/$suite" || return 1
	cp "$repo/$selftests/Makefile" "$tree/$selftests/Makefile"
	if [ -f "$tree/$suite/Makefile" ]; then
		make -C "$tree/$selftests" TARGETS=module_async KDIR="$kdir" || return 1
		[ -x "$tree/$suite/module_async" ] || { echo "no runner"; return 1; }
	elif [ -f "$tree/$suite/modules/Makefile" ]; then
		make -C "$tree/$suite/modules" KDIR="$kdir" || return 1
	fi
	if [ -f "$tree/$suite/modules/Makefile" ]; then
		compgen -G "$tree/$suite/modules/*.ko" || { echo "no modules"; return 1; }
	fi
	[ ! -f "$tree/$suite/Makefile" ] || return 0
	for f in "$tree/$suite"/lib/*.c "$tree/$suite"/runner/*.c "$tree/$suite"/*.c; do
		[ -f "$f" ] || continue
		gcc -O2 -Wall -Wextra -Werror -I"$tree/$selftests" -c -o "${f%.c}.o" "$f" ||
			return 1
		objs+=("${f%.c}.o")
	done
	[ ! -f "$tree/$suite/module_async.c" ] || gcc -o "$tree/$suite/module_async" "${objs[@]}"
} >"$tmp/build.log" 2>&1

for p in "${patches[@]}"; do
	if ! git -C "$repo" -c user.name=maintainer -c user.email=maintainer@localhost \
		am -q --whitespace=error "$p" >"$tmp/am.log" 2>&1; then
		fail "git am ${p##*/}: $(tail -n 3 "$tmp/am.log")"
		break
	fi
	pass "git am --whitespace=error applies ${p##*/}"
	details=$tmp/build.log check "the suite builds after ${p##*/}" builds
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
