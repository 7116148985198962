#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-series.sh - `make series` as a maintainer receives it: the patches
# (tools/kernel/series.sh) apply with git am to linux-source-7.2's files,
# the directory they add is the suite as it goes into a tree (lib.sh's
# suite_files), make kselftest's TARGETS runs it and MAINTAINERS names it.
# The checkpatch stage reads the same patches; the intree stage runs the
# suite in linux-source-7.2's selftests.
# Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

case ${1:-} in
'') ;;
-h | --help) echo "Usage: $PROG [--help]"; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac
need_cmd git rsync

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$("$TOOLS/kernel/fetch-source.sh" --series 7.2 | tail -n 1) ||
	die "could not fetch linux-source-7.2"
selftests=tools/testing/selftests

if "$TOOLS/kernel/series.sh" --source "$src" --out "$tmp/series" >"$tmp/series.list" 2>&1 &&
   [ "$(grep -c '\.patch$' "$tmp/series.list")" -eq 3 ]; then
	pass "make series: a cover letter and two patches"
else
	fail "make series: $(tail -n 3 "$tmp/series.list")"
fi

# The tree's own files the series changes, committed as they are.
repo=$tmp/linux
mkdir -p "$repo/$selftests"
cp "$src/MAINTAINERS" "$repo/"
cp "$src/$selftests/Makefile" "$repo/$selftests/"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=base -c user.email=base@localhost commit -q -m base
if git -C "$repo" -c user.name=maintainer -c user.email=maintainer@localhost \
	am -q --whitespace=error "$tmp"/series/000[1-9]-*.patch >"$tmp/am.log" 2>&1; then
	pass "git am --whitespace=error applies the series to linux-source-7.2"
else
	fail "git am: $(tail -n 3 "$tmp/am.log")"
fi

mkdir "$tmp/suite"
suite_files | rsync -a --from0 --files-from=- "$TOP/" "$tmp/suite/"
if diff -r "$tmp/suite" "$repo/$selftests/module_async" >"$tmp/diff" 2>&1; then
	pass "the directory it adds is the suite as it goes into a tree"
else
	fail "the directory it adds differs from the suite: $(head -n 3 "$tmp/diff")"
fi
if [ "$(grep -cx 'TARGETS += module_async' "$repo/$selftests/Makefile")" -eq 1 ]; then
	pass "make kselftest's TARGETS has module_async once"
else
	fail "make kselftest's TARGETS lacks module_async"
fi
# shellcheck disable=SC2016 # awk, not shell
if awk -v f="F:	$selftests/module_async/" '
	$0 == "MODULE SUPPORT" { inside = 1 }
	$0 == "" { inside = 0 }
	inside && $0 == f { found = 1 }
	END { exit !found }' "$repo/MAINTAINERS"; then
	pass "MAINTAINERS: the directory under MODULE SUPPORT"
else
	fail "MAINTAINERS: no line for the directory under MODULE SUPPORT"
fi

checks_summary
