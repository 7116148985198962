# SPDX-License-Identifier: GPL-2.0
#
# lib-tests.sh - what the tests of tools/tests share: tools/lib.sh (whose
# pass, fail, skip, verify and checks_summary they report with), the usage
# and options, a scratch directory, a command's status and output, and the
# KTAP reader.  A test starts
#	set -euo pipefail
#	. "$(dirname "$0")/lib-tests.sh"
# (with a shellcheck source= directive naming this file).  A test's header
# comment, from its fourth line, is its --help; its "usage:" line names its
# options.

# shellcheck shell=bash
# shellcheck source=tools/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # for the scripts that source this
readonly KTAP=$TOOLS/ktap/ktap
# The kselftest runner's name for the suite's one test.
# shellcheck disable=SC2034 # for the scripts that source this
readonly KSFT_TEST='selftests: module_async: module_async.sh'

# A scratch directory, gone at the exit.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

usage()
{
	sed -n '4,/^[^#]/s/^# \{0,1\}//p' "$0"
}

# test_options ARG...: -h or --help (the usage, exit 0) and, in a script
# that set a default $out, --out DIR; anything else is bad usage.
test_options()
{
	while [ $# -gt 0 ]; do
		case $1 in
		--out)
			[ -n "${out:-}" ] || usage_error "unknown option '$1'"
			need_arg "$1" $#; out=$2; shift
			;;
		-h | --help) usage; exit 0 ;;
		*) usage_error "unknown option '$1'" ;;
		esac
		shift
	done
}

# run_to LOG CMD...: CMD with its output (stdout and stderr) in LOG, its
# status in $rc.
run_to()
{
	local log=$1

	shift
	# shellcheck disable=SC2034 # for the scripts that source this
	rc=0
	"$@" >"$log" 2>&1 </dev/null || rc=$?
}

# indent: stdin indented, as a check's details.
indent()
{
	sed 's/^/    /'
}

# check WHAT CMD...: verify WHAT CMD...; on a failure the files of
# $details (default $tmp/err) shown, indented.
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

# lab_results: the KTAP reader's verdicts ("<n> <case> <verdict>") as a lab
# files them, "<case> pass|fail|skip": an XFAIL a pass, a TIMEOUT or ERROR
# a fail.
lab_results()
{
	awk '{ print $2, $3 == "ok" || $3 == "xfail" ? "pass" : $3 == "skip" ? "skip" : "fail" }'
}
