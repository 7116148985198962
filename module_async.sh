#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kselftest driver of the module_async suite.
#
# Finds the C runner, installs a cleanup trap that puts the machine back
# as it was found should the runner die, and then runs the runner, which
# checks the prerequisites (root, module support, test modules built for
# the running kernel, module loading not forbidden by signature
# enforcement or lockdown) and prints one KTAP result line per case.
#
# A missing prerequisite is a whole-suite SKIP (exit 4) with its reason.
# Arguments are the runner's (see --help); they are validated before any
# prerequisite is checked, so a bad option is a usage error (exit 2).
# Without a built runner none can be: --help says so (exit 2), the rest
# is the SKIP "runner not built".

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
async_probe_knob=/sys/module/module/parameters/async_probe

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
	if [ -n "$saved_async_probe" ] && [ -w "$async_probe_knob" ] &&
	   ! knob_is module async_probe "$saved_async_probe"; then
		echo "$saved_async_probe" > "$async_probe_knob"
	fi
}

if [ ! -x "$runner" ]; then
	for arg in "$@"; do
		case "$arg" in
		-h | --help)
			echo "${0##*/}: runner not built (no $runner): make;" \
				"its --help lists the options" >&2
			exit 2
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
saved_async_probe=
{ read -r saved_async_probe <"$async_probe_knob"; } 2>/dev/null
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# The runner checks every argument first, so a bad one (an unknown option,
# a missing value, a stray word) is a usage error, exit 2, before anything
# is loaded; then the prerequisites (root, module support, the test
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
