#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-driver.sh - module_async.sh, the shell driver, with an empty
# --modules-dir: usage errors exit 2, --help and --list work anywhere, a
# missing prerequisite is a whole-suite SKIP (exit 4) with its reason.
#
# usage: test-driver.sh RUNNER    (the built module_async binary)

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"

case "${1:-}" in
-h | --help) usage; exit 0 ;;
'') usage_error "no runner given" ;;
esac
[ -x "$1" ] || usage_error "no runner at $1"

# The driver runs the runner beside it, as in an install.
cp "$TOP/module_async.sh" "$1" "$tmp/"
mkdir "$tmp/empty"
details="$tmp/out $tmp/err"

# run ARG...: the driver; stdout in $tmp/out, stderr in $tmp/err, $status.
run()
{
	status=0
	"$tmp/module_async.sh" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || status=$?
}

# refused WHAT REGEX ARG...: the driver given ARGs exits 2 saying REGEX (-E).
refused()
{
	run "${@:3}"
	check "$1: exit 2, said with the usage on stderr, nothing on stdout" \
		usage_error_says "$2"
}

usage_error_says()
{
	[ "$status" -eq 2 ] && grep -qE -- "$1" "$tmp/err" && grep -q '^Usage:' "$tmp/err" &&
		[ ! -s "$tmp/out" ]
}

# is_skip_document REGEX: exit 4, "1..0 # SKIP <reason>" alone, REGEX its reason.
is_skip_document()
{
	local reason

	[ "$status" -eq 4 ] &&
		"$KTAP" check "$tmp/out" >/dev/null &&
		reason=$("$KTAP" skip-all "$tmp/out") &&
		[[ $reason =~ $1 ]] &&
		[ -z "$("$KTAP" body "$tmp/out")" ]
}

# The runner's cases are the expected table's rows (each once: its rule), in order.
cases_of_the_table()
{
	[ "$status" -eq 0 ] &&
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

refused "an unknown option" "unrecognized option '--bogus-option'" --bogus-option
refused "a bad --timeout-ms value" "bad --timeout-ms: soon " --timeout-ms soon
for short in 1 10 999; do
	refused "--timeout-ms $short, below the floor named" "bad --timeout-ms: $short \(1000 to " \
		--timeout-ms "$short"
done
# too_long_not_below: the "below the floor" reason not given for a bound too long.
too_long_not_below()
{
	! grep -q 'below 1000 ms' "$tmp/err"
}
refused "--timeout-ms 2147483648 (too long)" "bad --timeout-ms: 2147483648 \(1000 to " \
	--timeout-ms 2147483648
check "... not said to be below the floor" too_long_not_below
for list in '1,,2' ',5,' '5,' -1 ' 5'; do
	refused "--latency '$list': an empty or no number refused" "bad --latency: $list " \
		--latency "$list"
done
for a in --he --list-m "--ca async_init_completes" --allow; do
	# shellcheck disable=SC2086 # an option and its value
	refused "$a: a prefix of an option's name refused" \
		"unknown option: ${a%% *} \(names are whole" $a
done
refused "an unknown case name" "unknown case: no_such_case" --case no_such_case
refused "a stray argument" "unexpected argument: extra" extra
refused "--modules-dir without a value" "requires an argument" --modules-dir
refused "--timeout-ms without a value" "requires an argument" --timeout-ms
refused "--list with a bad argument" "unexpected argument: extra" --list extra

run --help
check "--help: exit 0 with usage" test "$status" -eq 0 -a "$(grep -c '^Usage:' "$tmp/out")" -gt 0

run --list
check "--list: the cases of the expected table, each once, in order" cases_of_the_table
check "settings: the timeout covers every case failing on its bound" settings_bound_covers

run --modules-dir "$tmp/empty"
check "missing prerequisite: whole-suite SKIP with a reason" is_skip_document '^[a-z].{10,}'
run --modules-dir "$tmp/empty" --case async_init_completes --timeout-ms 1000
check "valid options, missing prerequisite: still a SKIP" is_skip_document '^[a-z].{10,}'

rm "$tmp/module_async"
run --modules-dir "$tmp/empty"
check "runner not built: SKIP naming it" is_skip_document '^runner not built'
run --help
no_runner_said()
{
	[ "$status" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "runner not built" "$tmp/err"
}
check "runner not built, --help: exit 2, saying so, no SKIP document" no_runner_said

checks_summary
