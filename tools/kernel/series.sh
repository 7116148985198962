#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# series.sh - the suite as the patch series a maintainer would receive
# against Debian's linux-source-X.Y (`make series`):
#   0/2  a cover letter
#   1/2  tools/testing/selftests/module_async/, this directory as
#        tools/vm/ksft-install.sh puts it into a tree (lib.sh's
#        suite_files), and its MAINTAINERS line under MODULE SUPPORT,
#        whose maintainers own what it tests (kernel/module/)
#   2/2  tools/testing/selftests/Makefile: module_async in TARGETS, in
#        order, so that `make kselftest` runs it
# made with git in a scratch repository whose base commit holds the two
# files of the source the series changes, and written as
# DIR/000N-*.patch.  The author is this repository's git user.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

readonly TARGET=module_async
readonly MAINTAINERS_SECTION="MODULE SUPPORT"

usage()
{
	cat <<EOF
Usage: $PROG [--src X.Y] [--source DIR] [--out DIR]

Writes the suite as a patch series against linux-source-X.Y and prints the
patches' paths, one a line.

  --src X.Y       the linux-source series (default: 7.2, today's)
  --source DIR    an unpacked kernel tree instead (default:
                  tools/kernel/fetch-source.sh --series X.Y)
  --out DIR       where the patches go, emptied first (default: build/series)
  -h, --help      this text
EOF
}

series=7.2 src='' out=$TOP/build/series
while [ $# -gt 0 ]; do
	case $1 in
	--src) need_arg "$1" $#; series=$2; shift 2 ;;
	--source) need_arg "$1" $#; src=$2; shift 2 ;;
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
check_series "$series"
need_cmd git rsync awk
if [ -z "$src" ]; then
	src=$("$TOOLS/kernel/fetch-source.sh" --series "$series" | tail -n 1) ||
		die "could not fetch linux-source-$series"
fi
if [ ! -f "$src/MAINTAINERS" ] || [ ! -f "$src/tools/testing/selftests/Makefile" ]; then
	die "$src is not a kernel source tree"
fi

name=$(git -C "$TOP" config user.name) || die "no git user.name to sign the series with"
email=$(git -C "$TOP" config user.email) || die "no git user.email to sign the series with"
export GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email
export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email

work=$(mktemp -d "${TMPDIR:-/tmp}/series.$$.XXXXXX")
trap 'rm -rf "$work"' EXIT
repo=$work/linux
selftests=tools/testing/selftests
mkdir -p "$repo/$selftests"
cp "$src/MAINTAINERS" "$repo/"
cp "$src/$selftests/Makefile" "$repo/$selftests/"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" commit -q -m "linux-source-$series: MAINTAINERS and $selftests/Makefile"

# commit SUBJECT BODY: commit what is staged, signed off.
commit()
{
	git -C "$repo" commit -q -s -m "$1" -m "$2"
}

mkdir "$repo/$selftests/$TARGET"
suite_files | rsync -a --from0 --files-from=- "$TOP/" "$repo/$selftests/$TARGET/" ||
	die "cannot copy the suite"
LC_ALL=C awk -v sect="$MAINTAINERS_SECTION" -v f="F:	$selftests/$TARGET/" '
	$0 == sect { inside = 1 }
	inside && !done && (/^F:/ && $0 > f || $0 == "") {
		print f
		done = 1
	}
	{ print }
	END { if (!done) exit 1 }
' "$src/MAINTAINERS" >"$repo/MAINTAINERS" ||
	die "no \"$MAINTAINERS_SECTION\" entry in MAINTAINERS"
git -C "$repo" add -A
commit "selftests: $TARGET: module loading versus async function calls" \
"do_init_module() waits for all async work after a module's init
(async_synchronize_full()). An async job that loads a module
synchronously (a probe's request_module(), a write of an unloaded I/O
scheduler's name to queue/scheduler) then waits for modprobe while
modprobe waits for it: a deadlock that nothing can kill. 3.8 synced only
if the init used async (PF_USED_ASYNC); 5.17 reverted that because a
module whose init hands its async work to a worker returned too early.

Add a kselftest that shows, case by case, which of these behaviours a
kernel has, as KTAP with one stable line per case: test modules hold
their async jobs on gates the runner opens, every wait is bounded, a
deadlock is proven from the stuck tasks' stacks and reported with its
wait-for cycle, and the cases that would wedge the kernel run only where
the measured policy says they are safe, or when allowed (in a throw-away
VM). The test modules build against KDIR like TEST_GEN_MODS_DIR; without
a kernel build tree the suite skips, saying why. tools/ is the suite's
host side, to fetch or build a kernel and run the suite in QEMU; README
says how."

LC_ALL=C awk -v t="$TARGET" '
	!done && /^TARGETS \+= / && $3 > t { print "TARGETS += " t; done = 1 }
	{ print }
	END { if (!done) exit 1 }
' "$src/$selftests/Makefile" >"$repo/$selftests/Makefile" ||
	die "no TARGETS line to put $TARGET before in $selftests/Makefile"
git -C "$repo" add -A
commit "selftests: run $TARGET" \
"Add module_async to the targets make kselftest builds and runs."

rm -rf "$out"
mkdir -p "$out"
git -C "$repo" format-patch -q --cover-letter -o "$out" HEAD~2 >/dev/null
cover=$(find "$out" -name '0000-cover-letter.patch')
# The cover letter git leaves blank, filled in.
awk '
	/\*\*\* SUBJECT HERE \*\*\*/ {
		sub(/\*\*\* SUBJECT HERE \*\*\*/,
		    "selftests: module_async: module loading versus async function calls")
	}
	/\*\*\* BLURB HERE \*\*\*/ {
		print "A selftest for the deadlock between module init'"'"'s wait for all async"
		print "work and an async job that loads a module: which behaviour a kernel"
		print "has (the 3.8 flag, the 5.17 revert), case by case, as KTAP, without"
		print "wedging the run that asked. Patch 1 is the suite, patch 2 runs it."
		next
	}
	{ print }
' "$cover" >"$cover.new"
mv "$cover.new" "$cover"
ls "$out"/*.patch
