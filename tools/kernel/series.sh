#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# series.sh - `make series`: a cover letter, the payload in four patches
# that each build, and one adding it to TARGETS and MAINTAINERS; made with
# git in a scratch repository, as this repository's git user.

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

readonly TARGET=module_async
readonly MAINTAINERS_SECTION="MODULE SUPPORT"

usage()
{
	cat <<EOF
Usage: $PROG [--src X.Y] [--source DIR] [--out DIR]

Writes the suite as a patch series against linux-source-X.Y, as the git
user (or GIT_AUTHOR_NAME and _EMAIL), and prints the patches' paths.

  --src X.Y       the linux-source series (default: 7.2, today's)
  --source DIR    an unpacked kernel tree instead (fetch-source.sh's)
  --out DIR       where the patches go, emptied first (default: build/series)
  -h, --help      this text
EOF
}

src=7.2 source='' out=$TOP/build/series
while [ $# -gt 0 ]; do
	case $1 in
	--src | --source | --out) need_arg "$1" $#; printf -v "${1#--}" %s "$2" ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift 2
done
check_series "$src"
need_cmd git rsync awk
if [ -z "$source" ]; then
	source=$("$TOOLS/kernel/fetch-source.sh" --series "$src" | tail -n 1) ||
		die "could not fetch linux-source-$src"
fi
if [ ! -f "$source/MAINTAINERS" ] || [ ! -f "$source/tools/testing/selftests/Makefile" ]; then
	die "$source is not a kernel source tree"
fi

name=${GIT_AUTHOR_NAME:-$(git -C "$TOP" config user.name)} ||
	die "no git user.name (nor GIT_AUTHOR_NAME) to sign the series with"
email=${GIT_AUTHOR_EMAIL:-$(git -C "$TOP" config user.email)} ||
	die "no git user.email (nor GIT_AUTHOR_EMAIL) to sign the series with"
export GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email
export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email

work=$(mktemp -d "${TMPDIR:-/tmp}/series.$$.XXXXXX")
trap 'rm -rf "$work"' EXIT
repo=$work/linux
selftests=tools/testing/selftests
mkdir -p "$repo/$selftests"
cp "$source/MAINTAINERS" "$repo/"
cp "$source/$selftests/Makefile" "$repo/$selftests/"
git -C "$repo" init -q -b series
git -C "$repo" add -A
git -C "$repo" commit -q -m "linux-source-$src: MAINTAINERS and $selftests/Makefile"

suite=$repo/$selftests/$TARGET
payload_copy "$work/payload" || die "cannot copy the suite"

# patch SUBJECT BODY PATH...: the payload's PATHs added to the tree and
# committed ("." for the rest).
patch()
{
	local subject=$1 body=$2 p

	shift 2
	for p; do
		mkdir -p "$suite/$(dirname "$p")"
		cp -a "$work/payload/$p" "$suite/$(dirname "$p")/"
	done
	git -C "$repo" add -A
	git -C "$repo" commit -q -s -m "selftests: $TARGET: $subject" -m "$body"
}

patch "test modules for module loading versus async calls" \
"do_init_module() waits for all async work after a module's init. An
async job that loads a module synchronously then waits for modprobe
while modprobe waits for it: a deadlock nothing can kill. 3.8 synced
only if the init used async (PF_USED_ASYNC); 5.17 reverted that.

Add the modules the selftest loads: each queues async work (from its
init, a worker, a probe, or chained) or requests a module from an async
job, held on a gate the test opens, so that every wait is bounded:

  make -C tools/testing/selftests/$TARGET/modules KDIR=..." modules

patch "the runner's library" \
"The runner's helpers, each bounded: module load, unload and state,
children with a deadline, waits with a timeout, the stuck tasks' stacks
and wait-for cycle, the kernel log since a mark, module parameters, and
KTAP output. Nothing runs them yet." lib

patch "the cases" \
"The runner and its table of cases, one KTAP line each. A case loads
test modules, opens their gates, and checks the promises a load makes
when it returns. A case that would wedge the kernel runs only where the
measured policy says it is safe, or with --allow-deadlock; a deadlock
is a TIMEOUT with its stacks and wait-for cycle." module_async.c runner

patch "module loading versus async function calls" \
"Add the kselftest: module_async.sh checks what the suite needs and
skips saying why, then runs the runner under settings' timeout. The
Makefile builds the runner, and the test modules as TEST_GEN_MODS_DIR
when KDIR names a kernel build tree; config lists the options the cases
need; README says how to run and read it." .
diff -r "$work/payload" "$suite" >/dev/null || die "the patches do not hold the payload"

LC_ALL=C awk -v sect="$MAINTAINERS_SECTION" -v f="F:	$selftests/$TARGET/" '
	$0 == sect { inside = 1 }
	inside && !done && (/^F:/ && $0 > f || $0 == "") {
		print f
		done = 1
	}
	{ print }
	END { if (!done) exit 1 }
' "$source/MAINTAINERS" >"$repo/MAINTAINERS" ||
	die "no \"$MAINTAINERS_SECTION\" entry in MAINTAINERS"
LC_ALL=C awk -v t="$TARGET" '
	!done && /^TARGETS \+= / && $3 > t { print "TARGETS += " t; done = 1 }
	{ print }
	END { if (!done) exit 1 }
' "$source/$selftests/Makefile" >"$repo/$selftests/Makefile" ||
	die "no TARGETS line to put $TARGET before in $selftests/Makefile"
git -C "$repo" add -A
git -C "$repo" commit -q -s \
	-m "selftests: $TARGET: run it with make kselftest, under MODULE SUPPORT" -m \
"Add module_async to make kselftest's targets, and its directory to
MODULE SUPPORT: what it tests is kernel/module/'s."

# counts KERNEL [--allow-deadlock]: "N ok, N skip, ..." of KERNEL's column
# of the expected table.
counts()
{
	"$TOOLS/expected/expected" ${2:+"$2"} column "$1" |
		awk '!/^#/ && $1 != "policy" && $1 != "status" { n[$2]++ }
		END {
			n_order = split("ok xfail not-ok skip timeout error", order)
			for (i = 1; i <= n_order; i++)
				if (n[order[i]]) s = s (s ? ", " : "") n[order[i]] " " order[i]
			print s
		}' || die "no column $1 in tools/expected/verdicts"
}

# blurb: the cover letter's subject and text.
blurb()
{
	local lines files k what kept

	lines=$(clone_files "${PAYLOAD[@]}" | (cd "$TOP" && xargs -0 cat) | wc -l)
	files=$(clone_files "${PAYLOAD[@]}" | tr -cd '\0' | wc -c)
	cat <<EOF
selftests: $TARGET: module loading versus async function calls

A selftest for the deadlock between module init's wait for all async
work and an async job that loads a module: which behaviour a kernel has,
case by case, as KTAP, without wedging the run that asked.

Patches 1-4 add tools/testing/selftests/$TARGET/, $lines lines in $files
files: the test modules, the runner's library, the cases, then the
driver, Makefile, config, settings and README. Patch 5 runs it from make
kselftest and lists it under MODULE SUPPORT.

Today's Debian kernels, in QEMU (TCG, 2 vCPUs), run safe (what the
policy would wedge skips) and with deadlocks allowed, as the project's
table of expected verdicts has them:

EOF
	for k in stock-bullseye stock stock-trixie stock-sid; do
		what=$(sed -nE "s/^#   $k +(.*[^:]):?\$/\\1/p" "$TOOLS/expected/verdicts")
		printf '  %s\n' "$what"
		printf '    policy %s; safe: %s\n' \
			"$("$TOOLS/expected/expected" column "$k" | sed -n 's/^policy //p')" \
			"$(counts "$k")"
		printf '    deadlocks allowed: %s\n' "$(counts "$k" --allow-deadlock)"
	done
	cat <<EOF

An xfail is a known failure of the kernel: freeze_during_held_load
(every always-sync kernel).

EOF
	echo "checkpatch.pl --strict finds only these, kept on purpose:"
	# "checkpatch build/lint/series/000N-*.patch TYPE: why" (or 000[N-M]).
	kept='s|^checkpatch build/lint/series/000\[?([0-9-]+)\]?-\*\.patch ([A-Z_]+):|'
	sed -nE "$kept\\2 (patch \\1):|p" "$TOOLS/lint.exceptions" |
		sed -E 's/\(patch ([0-9]-[0-9])\)/(patches \1)/' | fold -s -w 70 |
		sed 's/ *$//; s/^/  /'
}
git -C "$repo" config branch.series.description "$(blurb)"

rm -rf "$out"
mkdir -p "$out"
git -C "$repo" format-patch -q --cover-letter --cover-from-description=subject -o "$out" \
	HEAD~5 >/dev/null
ls "$out"/*.patch
