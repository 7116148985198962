# SPDX-License-Identifier: GPL-2.0
#
# lib-tests.sh - what tools/tests share: lib.sh, usage and options, a
# scratch directory, checks.  Sourced after set -euo pipefail.

# shellcheck shell=bash
# shellcheck source=tools/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# The KTAP reader; the kselftest runner's name for the suite's one test.
# shellcheck disable=SC2034 # for the scripts that source this
readonly KTAP=$TOOLS/ktap/ktap KSFT_TEST='selftests: module_async: module_async.sh'

# A scratch directory, removed (--keep: kept) at the exit, which ends a test's
# jobs and unmounts its small disks.
tmp=$(mktemp -d)
keep=0 mounts=()
scratch_end()
{
	local m

	# shellcheck disable=SC2046 # one pid a word
	kill $(jobs -p) 2>/dev/null || true
	for m in "${mounts[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
	if [ "$keep" = 1 ]; then
		log "kept $tmp"
	else
		chmod -R u+w "$tmp" 2>/dev/null || true
		rm -rf "$tmp"
	fi
}
trap scratch_end EXIT

# small_disk DIR: a 16 MiB tmpfs on DIR (made), unmounted at the exit; fails
# where this user cannot mount one.
small_disk()
{
	mkdir -p "$1" && mount -t tmpfs -o size=16m module_async-test "$1" 2>/dev/null &&
		mounts+=("$1")
}

# usage: the test's header comment from its fourth line.
usage()
{
	sed -n '4,/^[^#]/s/^# \{0,1\}//p' "$0"
}

# test_options ARG...: -h, --help, --keep, and --out DIR or --full if $out or $full is set.
test_options()
{
	while [ $# -gt 0 ]; do
		case $1 in
		--out)
			[ -n "${out:-}" ] || usage_error "unknown option '$1'"
			need_arg "$1" $#; out=$2; shift
			;;
		--full)
			[ -n "${full:-}" ] || usage_error "unknown option '$1'"
			full=1
			;;
		--keep) keep=1 ;;
		-h | --help) usage; exit 0 ;;
		*) usage_error "unknown option '$1'" ;;
		esac
		shift
	done
}

# run_to LOG CMD...: CMD with its stdout and stderr in LOG, its status in $rc.
# shellcheck disable=SC2034 # $rc: for the scripts that source this
run_to()
{
	local log=$1

	shift
	rc=0
	"$@" >"$log" 2>&1 </dev/null || rc=$?
}

indent()
{
	sed 's/^/    /'
}

# check WHAT CMD...: verify WHAT CMD...; a failure shows $details ($tmp/err).
check()
{
	local f

	if "${@:2}"; then
		pass "$1"
		return
	fi
	fail "$1"
	for f in ${details:-$tmp/err}; do
		[ ! -f "$f" ] || tail -n 20 "$f" | indent
	done
}

# lab_results: the KTAP reader's verdicts as a lab files them, "<case> pass|fail|skip".
lab_results()
{
	awk '{ print $2, $3 == "ok" || $3 == "xfail" ? "pass" : $3 == "skip" ? "skip" : "fail" }'
}

# expect_verdicts WHAT KERNEL DOC STATUS LOG: check WHAT, that DOC, of a run
# that exited STATUS, has KERNEL's expected verdicts (the comparison in LOG).
expect_verdicts()
{
	if "$TOOLS/expected/expected" compare --status "$4" "$2" "$3" >"$5" 2>&1; then
		pass "$1"
	else
		fail "$1 (${5#"$TOP"/})"
		"$KTAP" totals "$5" | sed '$d; s/^/# /' || true
	fi
}
