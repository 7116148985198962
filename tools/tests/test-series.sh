#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-series.sh - `make series` as a maintainer receives it: its cover
# letter and patches, each applying to linux-source-7.2 and the suite
# building after each (once it has its Makefile: test-intree.sh on 7.2);
# the directory added is the payload.  And the READMEs keep their limits.
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
lines=$(clone_files "${PAYLOAD[@]}" | (cd "$TOP" && xargs -0 cat) | wc -l)
verify "the cover letter gives the payload's size: $lines lines" \
	grep -q "module_async/, $lines lines in" "$cover"
verify "the cover letter gives the verdicts on four of today's kernels" \
	test "$(grep -cE '^    policy [a-z-]+; safe: [0-9]+ ok' "$cover")" -eq 4

kdir=$(readlink -f "$("$TOOLS/kernel/fetch-kernel.sh" --dist sid | tail -n 1)/kdir") ||
	die "could not fetch sid's kernel"

repo=$tmp/linux
mkdir -p "$repo/$selftests"
cp "$src/MAINTAINERS" "$repo/"
cp "$src/$selftests/Makefile" "$repo/$selftests/"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=base -c user.email=base@localhost commit -q -m base

# builds: in a copy, the modules against sid's 7.2, the C with -Werror and the tree's kselftest.h.
builds()
{
	local dir=$tmp/build f objs=()

	rm -rf "$dir"
	cp -a "$repo/$suite" "$dir" || return 1
	if [ -f "$dir/modules/Makefile" ]; then
		make -j"$(nproc)" -C "$dir/modules" KDIR="$kdir" || return 1
		compgen -G "$dir/modules/*.ko" || { echo "no modules"; return 1; }
	fi
	for f in "$dir"/lib/*.c "$dir"/runner/*.c "$dir"/*.c; do
		[ -f "$f" ] && objs+=("${f%.c}.o")
	done
	# shellcheck disable=SC2016 # the inner shell expands them
	[ ${#objs[@]} -eq 0 ] || printf '%s\0' "${objs[@]}" |
		xargs -0 -P "$(nproc)" -I{} sh -c 'gcc -O2 -Wall -Wextra -Werror -I"$1" \
			-c -o "$2" "${2%.o}.c"' sh "$src/$selftests" {} || return 1
	[ ! -f "$dir/module_async.c" ] || gcc -o "$dir/module_async" "${objs[@]}"
} >"$tmp/build.log" 2>&1

for p in "${patches[@]}"; do
	if ! git -C "$repo" -c user.name=maintainer -c user.email=maintainer@localhost \
		am -q --whitespace=error "$p" >"$tmp/am.log" 2>&1; then
		fail "git am ${p##*/}: $(tail -n 3 "$tmp/am.log")"
		break
	fi
	pass "git am --whitespace=error applies ${p##*/}"
	[ -f "$repo/$suite/Makefile" ] ||
		details=$tmp/build.log check "the suite builds after ${p##*/}" builds
done

payload_copy "$tmp/suite"
run_to "$tmp/diff" diff -r "$tmp/suite" "$repo/$suite"
details=$tmp/diff check "the directory the series adds is the payload" test "$rc" -eq 0
verify "make kselftest's TARGETS has module_async once" \
	test "$(grep -cx 'TARGETS += module_async' "$repo/$selftests/Makefile")" -eq 1
# shellcheck disable=SC2016 # awk, not shell
verify "MAINTAINERS: the directory under MODULE SUPPORT" awk -v f="F:	$suite/" '
	$0 == "MODULE SUPPORT" { inside = 1 }
	$0 == "" { inside = 0 }
	inside && $0 == f { found = 1 }
	END { exit !found }' "$repo/MAINTAINERS"

checks_summary
