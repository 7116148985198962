#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the module_async test VM (tools/vm/mkinitramfs.sh puts it in the
# initramfs, tools/vm/vm-run boots it).  /bin/sh there is dash, the other
# tools are busybox's, but for the real kmod tools and util-linux dmesg.
#
# It runs the suite with the arguments the host sends on the results
# channel once the guest is ready (see below), in one of two ways, as
# /etc/module_async.via says (written by mkinitramfs.sh; "direct" if it is
# missing):
#   direct         /opt/module_async/module_async.sh ARGS
#   run_kselftest  KSELFTEST_MODULE_ASYNC_SH_ARGS="ARGS" \
#                  /opt/kselftest/run_kselftest.sh -c module_async
# The kselftest runner exits 0 whatever happened: the host reads the suite's
# exit status from the runner's result line for module_async.sh
# (tools/vm/vm-run).  Its output is the kselftest runner's KTAP, the
# suite's nested in it with each line prefixed with "# ".  The output is
# kept in $DOC.  The guest reads no result line (no KTAP reader here, the
# host's is Python): it looks in $DOC for one fixed line only, the suite's
# "# kernel wedged by CASE" (see suite_wedged).
#
# It reports on two serial ports:
#   ttyS0  the console: kernel log, the suite's stdout and stderr
#   ttyS1  the results channel: MODULE_ASYNC_READY, MODULE_ASYNC_BEGIN, the
#          suite's stdout (its KTAP), then "MODULE_ASYNC_END rc=<exit status>"
# The host takes the results only from ttyS1 and waits for the end marker,
# so nothing is lost if the console drops its last lines when the guest
# goes down.
#
# MODULE_ASYNC_READY says the guest is set up and waits for its arguments:
# the host may save the guest's state there (tools/vm/vm-run), and a
# guest restored from that state starts here, the kernel as no case has
# touched it.  The host then writes on ttyS1 one line
# "MODULE_ASYNC_ARGS <seconds since the epoch> <N>" and N lines, one
# argument each; the clock is set from it (a restored guest's clock is that
# of the save).  No arguments within ARGS_BOUND_DS: the suite does not run.
# A guest whose state is not saved (vm-run) or that no host answers
# (make lava: LAVA's QEMU) has its arguments in the initramfs instead,
# PRESET_ARGS (tools/vm/qemu.sh's initrd_with_args), and asks for none: its
# clock is the one the kernel read from the RTC at boot.
#
# The console carries whole lines: LAVA reads the suite's results off it,
# and a kernel message printed in the middle of a result line would break
# it in two (on a busy host it does).  While the suite runs, the kernel
# prints only its alerts and emergencies itself (console_loglevel 2: a
# crash's first lines, where no process may run any more) and the header of
# a sysrq (whatever the level); a relay (relay_start) writes the other
# messages the kernel would have printed, a line a write, as the copy of
# the suite's output does.  A message at the relay's start or end may show
# twice; the kernel's log (dmesg) has them all.
#
# Nothing here may wait for ever on a wedged kernel.  After a genuine
# deadlock a task stuck in the kernel for good may still hold the suite's
# stdout (so the copy of its output would never see the end of it): the
# end marker follows the suite's exit within COPY_BOUND_S.  A clean
# power off then hangs too (kernel_power_off() waits for the stuck usermode
# helper, and so does sysrq "o"): when the suite reported a wedged kernel
# ("# kernel wedged by CASE"), the guest goes down by sysrq "b" (an immediate
# reset, which QEMU's -no-reboot turns into an exit); otherwise by
# poweroff -f, falling back to sysrq "o", then "b".  The host kills QEMU
# anyway once the end marker has arrived.

PATH=/sbin:/bin:/usr/sbin:/usr/bin
export PATH

VIA_FILE=/etc/module_async.via
PRESET_ARGS=/etc/module_async.args	# arguments packed into the initramfs
ARGS_FILE=/run/module_async.args	# the host's arguments, one a line
RESULTS=/dev/ttyS1
OUTPUT=/run/module_async.out		# FIFO: the suite's stdout
COPIED=/run/module_async.copied		# the copy of its output is complete
DOC=/run/module_async.ktap		# what the suite printed
COPY_BOUND_S=1				# the copy's end after the suite's
ARGS_BOUND_DS=250			# for each byte of the arguments (VTIME)
FLOOR_ARG=--floor			# PRESET_ARGS' first line: power off at once
KLOG=/run/module_async.klog		# FIFO: /dev/kmsg's records, to the relay
# The FIFOs (each "# FIFO:" above) are in the image (tools/vm/mkinitramfs.sh
# makes them): a mkfifo here is an exec, 13 ms under TCG.  /init makes one
# the image lacks.

# The floor of a VM run (tools/bench): the same kernel and initramfs, and
# an /init that powers off before doing anything.
floor=
[ ! -r "$PRESET_ARGS" ] || read -r floor <"$PRESET_ARGS"
[ "$floor" != "$FLOOR_ARG" ] || poweroff -f

# The image has the rest: /run, /tmp, and /sbin/modprobe (kmod), which the
# kernel runs for request_module() (CONFIG_MODPROBE_PATH).
mount -t proc none /proc
mount -t sysfs none /sys
mount -t devtmpfs none /dev
exec </dev/console >/dev/console 2>&1

KLOG_FROM='guest-init: the kernel log reaches the console through the relay'
KLOG_TO='guest-init: the kernel log reaches the console directly'

# relay_start: the kernel's log to the console through the relay (see the
# top of this file), from the record KLOG_FROM on; relay and klog_reader
# are its processes.  The kernel prints directly where there is no relay to
# run (no /dev/kmsg) or nothing to relay (a console_loglevel of 2 or less).
relay_start()
{
	[ -r /dev/kmsg ] && [ -w /proc/sys/kernel/printk ] || return 0
	read -r console_level _ </proc/sys/kernel/printk
	[ "$console_level" -gt 2 ] || return 0
	[ -p "$KLOG" ] || mkfifo "$KLOG"
	cat /dev/kmsg >"$KLOG" 2>/dev/null &
	klog_reader=$!
	# A record: "PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;TEXT", then lines of
	# its dictionary, each begun with a space.  PRIORITY % 8 is the level:
	# EMERG (0) and ALERT (1) the kernel still prints itself.  The text as
	# the kernel prints it, with its time.  (cat reads a record whole:
	# awk's reads may be too short for one.)
	awk -v from=";$KLOG_FROM" -v to="$KLOG_TO" -v below="$console_level" '
		!on { on = index($0, from) > 0; next }
		/^ / { next }
		{
			split(substr($0, 1, index($0, ";") - 1), field, ",")
			text = substr($0, index($0, ";") + 1)
		}
		text == to { exit }
		field[1] % 8 > 1 && field[1] % 8 < below {
			printf "[%5d.%06d] %s\n", int(field[3] / 1000000),
				field[3] % 1000000, text
			fflush()
		}' <"$KLOG" &
	relay=$!
	echo "$KLOG_FROM" >/dev/kmsg
	echo 2 >/proc/sys/kernel/printk
}

# relay_end: the kernel prints to the console itself again; the relay ends
# once it has written the kernel's messages up to then (waited for by the
# caller, bounded).
relay_end()
{
	[ -n "$relay" ] || return 0
	echo "$console_level" >/proc/sys/kernel/printk
	echo "$KLOG_TO" >/dev/kmsg
	ended=$relay
	relay=
}
relay='' ended='' klog_reader=''
relay_start

# A stuck task should be reported long before the host's watchdog expires.
if [ -w /proc/sys/kernel/hung_task_timeout_secs ]; then
	echo 10 >/proc/sys/kernel/hung_task_timeout_secs
fi
# Loads and unloads wait for RCU grace periods (free_module() calls
# synchronize_rcu(), kernel/module/main.c:1188 in 6.1): under TCG, stock 6.1
# loads and unloads ma_plain in about 48 ms with normal ones, 9 ms with
# expedited ones.  A throw-away VM's kernel expedites them; no verdict
# depends on how long a grace period takes.
if [ -w /sys/kernel/rcu_expedited ]; then
	echo 1 >/sys/kernel/rcu_expedited
fi

via=direct
[ ! -r "$VIA_FILE" ] || read -r via <"$VIA_FILE"
case $via in
run_kselftest)
	SUITE=/opt/kselftest/run_kselftest.sh
	# What udev would make: the kselftest runner appends to /dev/stdout
	# (which would otherwise be a new regular file on devtmpfs).  Each
	# is an exec: not made for the suite alone, which needs none.
	ln -sfn /proc/self/fd /dev/fd
	ln -sf /proc/self/fd/0 /dev/stdin
	ln -sf /proc/self/fd/1 /dev/stdout
	ln -sf /proc/self/fd/2 /dev/stderr
	;;
*) SUITE=/opt/module_async/module_async.sh ;;
esac

# Without a second serial port the results go to the console only.
if ! (exec 3>"$RESULTS") 2>/dev/null; then
	echo "guest-init: cannot open $RESULTS: results on the console only"
	RESULTS=/dev/null
fi
# Raw: no CR added to the results, no echo of the host's arguments; a read
# waits at most ARGS_BOUND_DS for a byte.
stty -F "$RESULTS" raw -echo min 0 time "$ARGS_BOUND_DS" 2>/dev/null || true

# receive_args: the host's message on fd 4 (see the top of this file): the
# arguments one a line on stdout, the clock set; fails without a message.
receive_args()
{
	read -r tag now count <&4 || return 1
	[ "$tag" = MODULE_ASYNC_ARGS ] || return 1
	case $now in ''|*[!0-9]*) return 1 ;; esac
	case $count in ''|*[!0-9]*) return 1 ;; esac
	date -u -s "@$now" >/dev/null 2>&1 || echo "guest-init: cannot set the clock" >&2
	while [ "$count" -gt 0 ]; do
		IFS= read -r arg <&4 || return 1
		printf '%s\n' "$arg"
		count=$((count - 1))
	done
}

# Keep the results channel open for the whole run; closing it at the end
# waits until everything written has been sent.
exec 3>"$RESULTS"
args_ok=1 args=$PRESET_ARGS
read -r uptime _ </proc/uptime
echo "guest-init: ready at uptime $uptime s"	# for tools/bench
if [ ! -r "$PRESET_ARGS" ]; then
	args=$ARGS_FILE
	: >"$ARGS_FILE"
	exec 4<"$RESULTS"
	echo "MODULE_ASYNC_READY" >&3
	if [ "$RESULTS" != /dev/null ] && ! receive_args >"$ARGS_FILE"; then
		args_ok=0
		echo "guest-init: no arguments from the host within $((ARGS_BOUND_DS / 10)) s"
	fi
	exec 4<&-
fi
set --
while IFS= read -r arg; do
	set -- "$@" "$arg"
done <"$args"
echo "MODULE_ASYNC_BEGIN"
echo "MODULE_ASYNC_BEGIN" >&3

# copy_output: every line the suite prints to the console, the results
# channel and $DOC.
copy_output()
{
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		printf '%s\n' "$line" >&3
		printf '%s\n' "$line" >>"$DOC"
	done
	: >"$COPIED"
}

# suite_wedged: the suite reported a wedged kernel, by its fixed line
# "# kernel wedged by CASE" (nested in run_kselftest's output: "# # ...").
suite_wedged()
{
	grep -Eq '^(# )?# kernel wedged by ' "$DOC"
}

# copy_done: the copier has copied everything, waited for until it ends
# (the moment it does, where a poll would sleep a step), then the kernel
# prints directly again and the relay has written what came before: both
# within COPY_BOUND_S, when a watchdog kills what is left.
copy_done()
{
	(sleep "$COPY_BOUND_S" && kill "$copier" $relay 2>/dev/null) &
	watchdog=$!
	wait "$copier"
	relay_end
	[ -z "$ended" ] || wait "$ended"
	kill "$watchdog" $klog_reader 2>/dev/null
	[ -e "$COPIED" ]
}

if [ "$args_ok" = 0 ]; then
	echo "# guest-init: no arguments from the host: the suite does not run" >&3
	rc=126
elif [ -x "$SUITE" ]; then
	[ -p "$OUTPUT" ] || mkfifo "$OUTPUT"
	: >"$DOC"
	copy_output <"$OUTPUT" &
	copier=$!
	if [ "$via" = run_kselftest ]; then
		# The runner appends to /dev/stdout: a pipe, not a file.
		KSELFTEST_MODULE_ASYNC_SH_ARGS="$*" "$SUITE" -c module_async >"$OUTPUT"
		rc=$?
	else
		"$SUITE" "$@" >"$OUTPUT"
		rc=$?
	fi
	if ! copy_done; then
		echo "guest-init: something the suite left behind holds its output open:" \
			"not waiting for it"
	fi
else
	echo "# guest-init: $SUITE is missing or not executable"
	echo "# guest-init: $SUITE is missing or not executable" >&3
	rc=127
fi

relay_end
echo "MODULE_ASYNC_END rc=$rc"
echo "MODULE_ASYNC_END rc=$rc" >&3
exec 3>&-

if [ -e "$DOC" ] && suite_wedged; then
	echo "guest-init: the kernel is wedged, a clean power off would hang: sysrq reboot"
	echo b >/proc/sysrq-trigger
fi
# The sleeps bound the fallbacks only: a power off that works ends them.
poweroff -f &
sleep 3
echo "guest-init: poweroff hangs, trying sysrq power off"
echo o >/proc/sysrq-trigger
sleep 3
echo "guest-init: still up, sysrq reboot"
echo b >/proc/sysrq-trigger
