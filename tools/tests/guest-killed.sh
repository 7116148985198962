#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-killed.sh - test-leftovers.sh's suite in the guest: module_async.sh
# (driver.sh here) run with its runner killed (SIGKILL) while async_probe
# is set, then killed itself with its runner likewise, then run whole; the
# knobs before, when killed and after, as "#" lines.  Not while pm_test is
# set: the freezer case freezes this script too, and once thawed the runner
# puts pm_test back first more often than not (the trap's putting back is
# one loop for every knob: test-driver.sh checks it for each).
# shellcheck disable=SC2317 # functions that within() calls
here=${0%/*}
ap=/sys/module/module/parameters/async_probe
pt=/sys/power/pm_test

knobs()
{
	read -r a <"$ap"
	read -r p <"$pt"
}

# within S CMD...: CMD until it succeeds, for at most S s of uptime.
within()
{
	read -r up _ </proc/uptime
	end=$((${up%.*} + $1))
	shift
	while [ "${up%.*}" -lt "$end" ]; do
		"$@" && return 0
		read -r up _ </proc/uptime
	done
	return 1
}

# async_probe as the policy probe sets it (for freeze_during_held_load,
# long enough to be seen).
knob_set()
{
	knobs
	[ "$a" != "${found%% *}" ]
}
# The killed runs' jobs released and test modules unloaded: no trap did.
no_test_module()
{
	left=
	while read -r name _ _ _ state _; do
		case $name in ma_*) ;; *) continue ;; esac
		echo 1 >"/sys/module/$name/parameters/open" 2>/dev/null
		[ "$state" = Live ] && rmmod "$name" 2>/dev/null && continue
		left="$left $name"
	done </proc/modules
	[ -z "$left" ]
}

knobs
found="$a $p"
echo "# knobs before: $found"
# caught: the runner's processes stopped while the knob is set (a runner
# that put it back meanwhile goes on, and this run caught nothing).
caught()
{
	knob_set || return 1
	# shellcheck disable=SC2046 # one pid a word
	kill -STOP $(pidof module_async) 2>/dev/null
	knob_set && return 0
	# shellcheck disable=SC2046
	kill -CONT $(pidof module_async) 2>/dev/null
	return 1
}
for victim in runner driver; do
	try=1
	while :; do
		"$here/driver.sh" --case async_probe_skips_unrelated_async \
			--case freeze_during_held_load >/run/killed.out 2>&1 &
		driver=$!
		within 60 caught && break
		wait "$driver"
		echo "# $victim: try $try: no knob caught set"
		[ $try -lt 5 ] || break
		try=$((try + 1))
	done
	[ "$victim" = runner ] || kill -KILL "$driver"
	# The runner and its children (busybox's pidof names them all).
	# shellcheck disable=SC2046 # one pid a word
	kill -KILL $(pidof module_async) 2>/dev/null
	echo "# knobs when the $victim was killed: $a $p"
	wait "$driver"
	sed "s/^/# $victim killed: /" /run/killed.out
	within 30 no_test_module || echo "# left loaded:$left"
done
knobs
echo "# knobs before the next run: $a $p"
"$here/driver.sh" --case async_init_completes
rc=$?
knobs
echo "# knobs after: $a $p"
exit "$rc"
