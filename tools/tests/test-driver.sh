#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-driver.sh - module_async.sh, the shell driver, with an empty
# --modules-dir: usage errors exit 1 (kselftest's runner.sh of 6.1 and 7.2
# report it "not ok"), --help and --list work anywhere, a missing
# prerequisite is a whole-suite SKIP (exit 4) with its reason; the knobs a
# run changes are put back after a runner killed with SIGKILL, and by the
# next run after the driver itself was (a stand-in runner, knobs in files).
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

# Its state file in the scratch directory: none written on this host's /run.
export MODULE_ASYNC_STATE_DIR=$tmp/run/module_async

# run ARG...: the driver; stdout in $tmp/out, stderr in $tmp/err, $status.
run()
{
	status=0
	"$tmp/module_async.sh" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || status=$?
}

# refused WHAT REGEX ARG...: the driver given ARGs exits 1 saying REGEX (-E).
refused()
{
	run "${@:3}"
	check "$1: exit 1, said with the usage on stderr, nothing on stdout" \
		usage_error_says "$2"
}

usage_error_says()
{
	[ "$status" -eq 1 ] && grep -qE -- "$1" "$tmp/err" && grep -q '^Usage:' "$tmp/err" &&
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
	nmodules=$(make -s --no-print-directory -C "$TOP/modules" list | wc -w)
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

# kselftest's runner.sh of SERIES runs the driver with a bad option, as
# run_kselftest.sh would: its line is "not ok", no XFAIL (exit 2 was one).
ksft_reads_usage_error()
{
	local series=$1 src base

	src=$("$TOOLS/kernel/fetch-source.sh" --series "$series" | tail -n 1) ||
		{ echo "cannot fetch linux-source-$series" >"$tmp/err"; return 1; }
	base=$tmp/ksft-$series
	mkdir -p "$base/module_async"
	cp -r "$src/tools/testing/selftests/kselftest" "$base/"
	cp "$tmp/module_async.sh" "$tmp/module_async" "$TOP/settings" "$base/module_async/"
	# Through a pipe: runner.sh opens /dev/stdout again (on a file, at 0).
	# shellcheck disable=SC2016 # runner.sh's shell expands them
	(cd "$base/module_async" && BASE_DIR=$base \
		KSELFTEST_MODULE_ASYNC_SH_ARGS=--bogus-option \
		sh -c '. "$BASE_DIR/kselftest/runner.sh" && run_many ./module_async.sh') \
		2>&1 </dev/null | cat >"$tmp/err"
	grep -q "^not ok 1 selftests: module_async: module_async.sh # exit=1\$" "$tmp/err" &&
		! grep -qE "^ok [0-9]+ .*XFAIL" "$tmp/err"
}
for series in 6.1 7.2; do
	check "runner.sh of $series: a usage error is not ok, exit=1" \
		ksft_reads_usage_error "$series"
done

# The knobs a run may change, in files under $root (module_async.sh's
# MODULE_ASYNC_ROOT), as found: "RELATIVE-PATH CONTENT" a line.
root=$tmp/root
found_knobs='sys/module/module/parameters/async_probe N
sys/power/pm_test [none] core processors platform devices freezer
sys/power/pm_freeze_timeout 20000
sys/module/suspend/parameters/pm_test_delay 5'
knobs_as_found()
{
	local k v

	rm -rf "$root"
	while read -r k v; do
		mkdir -p "$root/${k%/*}"
		echo "$v" >"$root/$k"
	done <<<"$found_knobs"
}

# knobs_are_found: each knob as found (pm_test's selected level "none"), no
# modprobe.d file or directory left; else the differences in $tmp/err.
knobs_are_found()
{
	local k v now

	: >"$tmp/err"
	while read -r k v; do
		now=$(cat "$root/$k")
		[[ $k != */pm_test || $now == '[none]'* ]] || v=none
		[ "$now" = "$v" ] || echo "$k: $now, found $v" >>"$tmp/err"
	done <<<"$found_knobs"
	[ ! -e "$root/run/modprobe.d" ] || echo "run/modprobe.d left" >>"$tmp/err"
	[ ! -s "$tmp/err" ]
}

# A stand-in runner: --list checks nothing; "ok" passes; "kill-runner" sets
# every knob, makes the modprobe.d file and dies by SIGKILL mid-run;
# "kill-driver" kills the driver that ran it, then itself.
cat >"$tmp/standin" <<'EOF'
#!/bin/sh
for arg; do [ "$arg" != --list ] || exit 0; done
echo "TAP version 13"
echo "1..1"
r=$MODULE_ASYNC_ROOT
case $STANDIN in
ok) echo "ok 1 standin"; exit 0 ;;
esac
echo Y >"$r/sys/module/module/parameters/async_probe"
echo freezer >"$r/sys/power/pm_test"
echo 1000 >"$r/sys/power/pm_freeze_timeout"
echo 0 >"$r/sys/module/suspend/parameters/pm_test_delay"
mkdir -p "$r/run/modprobe.d"
echo "options null_blk async_probe=1" >"$r/run/modprobe.d/module_async.conf"
[ "$STANDIN" != kill-driver ] || kill -KILL "$PPID"
kill -KILL $$
EOF
chmod +x "$tmp/standin"
standin()
{
	STANDIN=$1 MODULE_ASYNC_RUNNER=$tmp/standin MODULE_ASYNC_ROOT=$root run
}
details="$tmp/err $tmp/out"
knobs_as_found
standin kill-runner
check "the runner killed (SIGKILL) mid-run: exit 137" test "$status" -eq 137
check "... every knob as found after it, the modprobe.d file gone" knobs_are_found
check "... said on a # line" grep -q '^# cleanup: put back as found: .*pm_test=none' "$tmp/out"
check "... no state file left" test ! -e "$MODULE_ASYNC_STATE_DIR/state"

knobs_as_found
standin kill-driver
check "the driver killed (SIGKILL) mid-run: its state file left" \
	test "$status" -eq 137 -a -s "$MODULE_ASYNC_STATE_DIR/state"
check "... the knobs left changed" eval '! knobs_are_found'
standin ok
check "the next run passes" test "$status" -eq 0
check "... every knob as found after it, the modprobe.d file gone" knobs_are_found
check "... said first, on a # line" \
	grep -q "^# a killed run's state .*: put back: .*async_probe=N" \
		<(head -n 1 "$tmp/out")
check "... no state file left, nor its directory" test ! -e "$MODULE_ASYNC_STATE_DIR"
details="$tmp/out $tmp/err"

rm "$tmp/module_async"
run --modules-dir "$tmp/empty"
check "runner not built: SKIP naming it" is_skip_document '^runner not built'
run --help
no_runner_said()
{
	[ "$status" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q "runner not built" "$tmp/err"
}
check "runner not built, --help: exit 1 (a usage error), saying so, no SKIP document" no_runner_said

checks_summary
