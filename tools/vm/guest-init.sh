#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test VM (mkinitramfs.sh packs it), run by dash: the suite as
# /etc/module_async.via says (direct or run_kselftest).  The console (ttyS0)
# has the kernel's log and the suite's output in whole lines (LAVA reads it);
# ttyS1 speaks vm-run's protocol (its docstring).  Under TCG each exec costs
# ~30 ms: builtins where they do.

PATH=/sbin:/bin:/usr/sbin:/usr/bin
export PATH

VIA_FILE=/etc/module_async.via
PRESET_ARGS=/etc/module_async.args	# qemu.sh's initrd_with_args
ARGS_FILE=/run/module_async.args	# the host's arguments, one a line
RESULTS=/dev/ttyS1
OUTPUT=/run/module_async.out		# FIFO: the suite's stdout
COPIED=/run/module_async.copied		# the copy of its output is complete
DOC=/run/module_async.ktap		# what the suite printed
COPY_BOUND_S=1
ARGS_BOUND_DS=250			# VTIME: for each byte of the arguments
FLOOR_ARG=--floor			# PRESET_ARGS' first line: power off at once
KLOG=/run/module_async.klog		# FIFO: /dev/kmsg's records, to the relay
# mkinitramfs.sh makes each "# FIFO:" above in the image (a mkfifo is an exec).

# The floor of a VM run (tools/bench): an /init that does nothing.
floor=
[ ! -r "$PRESET_ARGS" ] || read -r floor <"$PRESET_ARGS"
[ "$floor" != "$FLOOR_ARG" ] || poweroff -f

mount -t proc none /proc
mount -t sysfs none /sys
mount -t devtmpfs none /dev
exec </dev/console >/dev/console 2>&1

KLOG_FROM='guest-init: the kernel log reaches the console through the relay'
KLOG_TO='guest-init: the kernel log reaches the console directly'

# relay_start: while the suite runs the kernel prints only EMERG and ALERT
# (console_loglevel 2: a crash's first lines); the relay prints the rest, a
# whole line a write, none breaking a line of the suite's (at its start or
# end a line may show twice).
relay_start()
{
	[ -r /dev/kmsg ] && [ -w /proc/sys/kernel/printk ] || return 0
	read -r console_level _ </proc/sys/kernel/printk
	[ "$console_level" -gt 2 ] || return 0
	# cat reads a record whole (awk's reads may be too short for one).
	cat /dev/kmsg >"$KLOG" 2>/dev/null &
	klog_reader=$!
	# A record: "PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;TEXT", then its
	# dictionary's lines, each begun with a space; PRIORITY % 8 the level.
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

# relay_end: the kernel prints itself again; the relay ($ended) ends.
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

[ ! -w /proc/sys/kernel/hung_task_timeout_secs ] ||
	echo 10 >/proc/sys/kernel/hung_task_timeout_secs
# free_module() waits for an RCU grace period: under TCG a load and unload
# of ma_plain takes 48 ms with normal ones, 9 ms expedited.
[ ! -w /sys/kernel/rcu_expedited ] || echo 1 >/sys/kernel/rcu_expedited

if ! (exec 3>"$RESULTS") 2>/dev/null; then
	echo "guest-init: cannot open $RESULTS: results on the console only"
	RESULTS=/dev/null
fi
# Raw: no CR added, no echo of the arguments; a read waits ARGS_BOUND_DS.
stty -F "$RESULTS" raw -echo min 0 time "$ARGS_BOUND_DS" 2>/dev/null || true

# receive_args: the host's arguments from fd 4, one a line; the clock set.
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

# Open for the whole run: closing it waits until all is sent.
exec 3>"$RESULTS"
args_ok=1 args=$PRESET_ARGS
read -r uptime _ </proc/uptime
echo "guest-init: ready at uptime $uptime s"
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
via=direct
[ ! -r "$VIA_FILE" ] || read -r via <"$VIA_FILE"
case $via in
run_kselftest)
	SUITE=/opt/kselftest/run_kselftest.sh
	export KSELFTEST_MODULE_ASYNC_SH_ARGS="$*"
	set -- -c module_async
	# The kselftest runner appends to /dev/stdout (no udev makes it here).
	ln -sf /proc/self/fd/1 /dev/stdout
	;;
*) SUITE=/opt/module_async/module_async.sh ;;
esac
echo "MODULE_ASYNC_BEGIN"
echo "MODULE_ASYNC_BEGIN" >&3

# copy_output: each line of the suite's to the console, ttyS1 and $DOC.
copy_output()
{
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		printf '%s\n' "$line" >&3
		printf '%s\n' "$line" >>"$DOC"
	done
	: >"$COPIED"
}

# copy_done: the copy and the relay ended, or after COPY_BOUND_S killed (a
# task stuck in the kernel may hold the suite's stdout): fails if so.
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
	: >"$DOC"
	copy_output <"$OUTPUT" &
	copier=$!
	"$SUITE" "$@" >"$OUTPUT"
	rc=$?
	copy_done || echo "guest-init: something the suite left behind holds its output open:" \
		"not waiting for it"
else
	echo "# guest-init: $SUITE is missing or not executable"
	echo "# guest-init: $SUITE is missing or not executable" >&3
	rc=127
fi

relay_end
echo "MODULE_ASYNC_END rc=$rc"
echo "MODULE_ASYNC_END rc=$rc" >&3
exec 3>&-

# A wedged kernel would hang a clean power off: reset (QEMU's -no-reboot
# exits).  The suite's fixed line, nested by run_kselftest in "# ".
if [ -e "$DOC" ] && grep -Eq '^(# )?# kernel wedged by ' "$DOC"; then
	echo "guest-init: the kernel is wedged, a clean power off would hang: sysrq reboot"
	echo b >/proc/sysrq-trigger
fi
# The sleeps bound the fallbacks: a power off that works ends them.
poweroff -f &
sleep 3
echo "guest-init: poweroff hangs, trying sysrq power off"
echo o >/proc/sysrq-trigger
sleep 3
echo "guest-init: still up, sysrq reboot"
echo b >/proc/sysrq-trigger
