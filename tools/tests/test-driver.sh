#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-driver.sh - host tests of module_async.sh, the shell driver: usage
# errors (a bad option or value, a --timeout-ms below its floor, a missing
# value, a stray word) exit 2 before
# any prerequisite is looked at, --help and --list work anywhere, and a
# missing prerequisite is a whole-suite SKIP (exit 4) with its reason as a
# well-formed KTAP document. Nothing here loads a module:
# every run that gets past the option check points --modules-dir at an
# empty directory.
#
# usage: test-driver.sh RUNNER    (the built module_async binary)

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	echo "usage: $PROG RUNNER"
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
'') usage_error "no runner given" ;;
esac
[ -x "$1" ] || usage_error "no runner at $1"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The driver runs the runner beside it, as in an install.
cp "$TOP/module_async.sh" "$1" "$tmp/"
mkdir "$tmp/empty"
driver=$tmp/module_async.sh
readonly KTAP=$TOOLS/ktap/ktap

# check WHAT CMD...: CMD succeeds; the last run's output shown if not.
check()
{
	if "${@:2}"; then
		pass "$1"
	else
		fail "$1"
		sed 's/^/    /' "$tmp/out" "$tmp/err"
	fi
}

run()
{
	status=0
	"$driver" "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || status=$?
}

# A whole-suite SKIP: a version line, "1..0 # SKIP <reason>" and nothing
# else, exit 4.
is_skip_document()
{
	local reason

	[ "$status" -eq 4 ] &&
		"$KTAP" check "$tmp/out" >/dev/null &&
		reason=$("$KTAP" skip-all "$tmp/out") &&
		[[ $reason =~ ^[a-z].{10,} ]] &&
		[ -z "$("$KTAP" body "$tmp/out")" ]
}

usage_on_stderr_only()
{
	grep -q "^Usage:" "$tmp/err" && ! [ -s "$tmp/out" ]
}

help_on_stdout()
{
	[ "$status" -eq 0 ] && grep -q "^Usage:" "$tmp/out"
}

# The runner's cases, each once, are the expected table's rows, in order.
cases_of_the_table()
{
	[ "$status" -eq 0 ] &&
		[ "$(awk '{ print $1 }' "$tmp/out" | sort | uniq -d)" = "" ] &&
		diff <(awk '{ print $1 }' "$tmp/out") <("$TOOLS/expected/expected" cases) \
			>"$tmp/err"
}

# settings' timeout covers its worst honest run: every case failing on its
# bound (twice --timeout-ms's 10 s), a 5 s rmmod bound a test module, and
# 20 s of passing work on a slow guest.
settings_bound_covers()
{
	local timeout ncases nmodules need

	timeout=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$TOP/settings")
	ncases=$(grep -c . "$tmp/out")
	nmodules=$(make -s -C "$TOP/modules" list | wc -w)
	need=$((ncases * 20 + nmodules * 5 + 20))
	echo "timeout=$timeout, worst honest run $need s" >"$tmp/err"
	[ -n "$timeout" ] && [ "$timeout" -ge "$need" ]
}

skip_names_runner()
{
	is_skip_document && [[ $("$KTAP" skip-all "$tmp/out") == "runner not built"* ]]
}

run --bogus-option
check "unknown option: exit 2" test "$status" -eq 2
check "unknown option: usage on stderr, nothing on stdout" usage_on_stderr_only

run --timeout-ms soon
check "bad --timeout-ms value: exit 2" test "$status" -eq 2

# A bound below what an honest load takes is refused, naming the floor.
names_the_floor()
{
	[ "$status" -eq 2 ] && grep -q "bad --timeout-ms: $1 (1000 to " "$tmp/err" &&
		usage_on_stderr_only
}

for short in 1 10 999; do
	run --timeout-ms "$short"
	check "--timeout-ms $short, below the floor: exit 2, the floor named" \
		names_the_floor "$short"
done

run --case no_such_case
check "unknown case name: exit 2" test "$status" -eq 2

# An option's value missing or a stray word: the runner's getopt says which.
names_missing_value()
{
	[ "$status" -eq 2 ] && grep -q "requires an argument" "$tmp/err" && usage_on_stderr_only
}

run extra
check "a stray argument: exit 2" test "$status" -eq 2
check "a stray argument: named on stderr" grep -q "unexpected argument: extra" "$tmp/err"

run --modules-dir
check "--modules-dir without a value: exit 2, said so" names_missing_value

run --timeout-ms
check "--timeout-ms without a value: exit 2, said so" names_missing_value

run --list extra
check "--list with a bad argument: exit 2" test "$status" -eq 2
check "--list with a bad argument: usage, no list" usage_on_stderr_only

run --help
check "--help: exit 0 with usage" help_on_stdout

run --list
check "--list: the cases of the expected table, each once, in order" cases_of_the_table
check "settings: the timeout covers every case failing on its bound" settings_bound_covers

run --modules-dir "$tmp/empty"
check "missing prerequisite: whole-suite SKIP with a reason" is_skip_document

run --modules-dir "$tmp/empty" --case async_init_completes --timeout-ms 1000
check "valid options, missing prerequisite: still a SKIP" is_skip_document

rm "$tmp/module_async"
run --modules-dir "$tmp/empty"
check "runner not built: SKIP naming it" skip_names_runner

checks_summary
