#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kselftest driver of the module_async suite.
#
# Finds the C runner, records the system-wide knobs a run may change, runs
# the runner, which checks the prerequisites (root, module support, test
# modules built for the running kernel, module loading not forbidden by
# signature enforcement or lockdown) and prints one KTAP result line per
# case, and then, in a trap, puts back what a killed runner left changed.
#
# The knobs as found are kept in $MODULE_ASYNC_STATE_DIR/state (default
# /run/module_async) during the run: should this script itself be killed,
# the next run puts them back first, saying so on a "#" line.
#
# Exit status (kselftest's): 0 pass, 1 a case failed or a usage error (a bad
# option, a missing value, a stray word: checked before anything is
# changed; --help without a built runner, which lists the options), 4 all
# skipped (a missing prerequisite: a whole-suite SKIP with its reason).

set -u

readonly KSFT_SKIP=4

# This script's directory, absolute, without a fork (slow in a VM).
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
CDPATH='' cd -- "$here" || exit 1
here=$PWD
cd -- "$OLDPWD" || exit 1
runner=${MODULE_ASYNC_RUNNER:-$here/module_async}
modules_dir=$here/modules
state_dir=${MODULE_ASYNC_STATE_DIR:-/run/module_async}
state=$state_dir/state
root=${MODULE_ASYNC_ROOT:-}	# of the knobs: the project's tests set it

# What a run may change system-wide, as the runner writes it: the module
# loader's async_probe (cases_request.c, probe.c), the freezer's test mode
# and its timeouts (cases_freeze.c); the modprobe.d file and its directory
# (cases_request.c), removed if they were not there.
knobs="$root/sys/module/module/parameters/async_probe $root/sys/power/pm_test
$root/sys/power/pm_freeze_timeout $root/sys/module/suspend/parameters/pm_test_delay"
made="$root/run/modprobe.d/module_async.conf $root/run/modprobe.d"

# The test modules the suite may load: those built into the modules
# directory (modules/Makefile's obj-m). The trap unloads those it finds
# loaded that were not loaded before the run.
# Each in $modules, set without a fork: forks are slow in a VM.
test_modules()
{
	modules=
	for ko in "$modules_dir"/*.ko; do
		[ -e "$ko" ] || continue
		ko=${ko##*/}
		modules="$modules ${ko%.ko}"
	done
}

skip_all()
{
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

is_loaded()
{
	[ -d "/sys/module/$1" ]
}

# knob_is MODULE NAME VALUE: the module's parameter reads VALUE; read
# without a fork: the cleanup polls it, and forks are slow in a VM.
knob_is()
{
	knob_value=
	{ read -r knob_value <"/sys/module/$1/parameters/$2"; } 2>/dev/null
	[ "$knob_value" = "$3" ]
}

# read_knob PATH: its value in $value ("" if unreadable); of pm_test's
# list, "[none] core ... freezer", the one selected.
read_knob()
{
	value=
	{ read -r value <"$1"; } 2>/dev/null
	case $value in
	*\[*\]*) value=${value#*\[}; value=${value%%\]*} ;;
	esac
}

# put_back VALUE PATH: PATH as VALUE says ("-": absent), if it is not;
# what changed in $put.
put_back()
{
	if [ "$1" = - ]; then
		[ -e "$2" ] || return 0
		rm -f "$2" 2>/dev/null || rmdir "$2" 2>/dev/null || return 1
		put="$put $2 (removed)"
		return 0
	fi
	read_knob "$2"
	[ "$value" != "$1" ] || return 0
	echo "$1" 2>/dev/null >"$2" || return 1
	put="$put ${2##*/}=$1 (was $value)"
}

# knobs_record: each knob's value, "VALUE PATH" a line, in $recorded and
# in $state (if it can be written).
knobs_record()
{
	recorded=
	for k in $knobs; do
		[ -e "$k" ] || continue
		read_knob "$k"
		[ -z "$value" ] || recorded="$recorded$value $k
"
	done
	for k in $made; do
		[ -e "$k" ] || recorded="$recorded- $k
"
	done
	mkdir -p "$state_dir" 2>/dev/null &&
		printf '%s' "$recorded" >"$state.new" 2>/dev/null &&
		mv -f "$state.new" "$state" 2>/dev/null
}

# knobs_put_back LINES: each "VALUE PATH" of LINES put back.
knobs_put_back()
{
	put=
	while read -r v k; do
		[ -z "$k" ] || put_back "$v" "$k" ||
			echo "# cannot put back $k as found ($v)"
	done <<EOF
$1
EOF
}

# A test module whose async job started and has not finished once its gate
# is open is stuck: its job waits on something that will not come (a
# request_module() whose modprobe waits for that very job). Then the kernel
# is wedged, and any rmmod would hang for good. The module in $stuck.
stuck_job()
{
	stuck=
	for mod in $modules; do
		knob_is "$mod" started 1 || continue
		knob_is "$mod" "done" 1 && continue
		stuck=$mod
		return 0
	done
	return 1
}

# Unload one module without ever blocking the caller for good: after a
# genuine deadlock rmmod itself can hang in D state, so it gets a bound.
# rmmod's output goes nowhere: a rmmod stuck in D state must not hold the
# suite's stdout (the KTAP pipe) open.
unload_bounded()
{
	name=$1
	rmmod "$name" > /dev/null 2>&1 &
	pid=$!
	i=0
	while [ $i -lt 50 ]; do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		sleep 0.1
		i=$((i + 1))
	done
	echo "# cleanup: rmmod $name still blocked after 5 s, left loaded"
	return 1
}

# The runner restores everything itself; this is the backstop for a runner
# that was killed or crashed half-way through a case. What it finds goes
# to stdout as "#" lines after the runner's document: a harness that keeps
# only the results (the VM's results channel) has the report too.
cleanup()
{
	for mod in $modules; do
		gate=/sys/module/$mod/parameters/open
		[ -w "$gate" ] && echo 1 > "$gate" 2>/dev/null
	done
	# An opened gate lets its job finish at once; allow it 2 s. A runner
	# that returned waited for the jobs itself: one look then.
	i=0 looks=20
	[ -z "$runner_returned" ] || looks=0
	while stuck_job && [ $i -lt $looks ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -n "$stuck" ]; then
		echo "# cleanup: the async job of $stuck is stuck, the kernel looks" \
			"wedged: no module unloaded"
	else
		for mod in $modules; do
			case " $loaded_before " in
			*" $mod "*) continue ;;
			esac
			# After one rmmod hangs, the others would too.
			if is_loaded "$mod" && ! unload_bounded "$mod"; then
				break
			fi
		done
	fi
	knobs_put_back "$recorded"
	[ -z "$put" ] || echo "# cleanup: put back as found:$put"
	rm -f "$state"
	rmdir "$state_dir" 2>/dev/null
}

if [ ! -x "$runner" ]; then
	for arg in "$@"; do
		case "$arg" in
		-h | --help)
			echo "${0##*/}: runner not built (no $runner): make;" \
				"its --help lists the options" >&2
			exit 1
			;;
		esac
	done
	skip_all "runner not built (no $runner): make"
fi

# Options are the runner's; --help and the lists need no prerequisites.
for arg in "$@"; do
	case "$arg" in
	-h | --help | -l | --list | --list-modules) exec "$runner" "$@" ;;
	esac
done
# The runner's own --modules-dir, if given, holds the modules the trap
# unloads.
prev=
for arg in "$@"; do
	case "$prev" in
	--modules-dir) modules_dir=$arg ;;
	esac
	case "$arg" in
	--modules-dir=*) modules_dir=${arg#--modules-dir=} ;;
	esac
	prev=$arg
done

test_modules
runner_returned=
loaded_before=
for mod in $modules; do
	is_loaded "$mod" && loaded_before="$loaded_before $mod"
done
# A bad argument is the runner's usage error (exit 1), before anything is
# recorded or changed.
"$runner" --list "$@" >/dev/null 2>&1 || exec "$runner" "$@"
# A state left by a run killed before its trap: put back first.
if [ -f "$state" ]; then
	{ left=$(cat "$state"); } 2>/dev/null
	knobs_put_back "$left"
	echo "# a killed run's state ($state): put back:${put:- nothing," \
		"all as found}"
	rm -f "$state"
fi
recorded=
knobs_record
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# The runner checks the prerequisites (root, module support, the test
# modules built for this kernel, no signature enforcement or lockdown);
# with MODULE_ASYNC_WHOLE_SUITE_SKIP set, a missing one is a whole-suite
# SKIP (exit 4) with its reason.
MODULE_ASYNC_WHOLE_SUITE_SKIP=1 "$runner" --modules-dir "$modules_dir" "$@"
rc=$?
# Not killed: the runner waited for the jobs itself (see cleanup).
[ "$rc" -gt 128 ] || runner_returned=1
# The runner's status, the script's last (an "exit" would hide the trap's
# functions from shellcheck).
(exit "$rc")
