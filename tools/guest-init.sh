#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the module_async test VM (tools/mkinitramfs.sh puts it in the
# initramfs, tools/vm-run.sh boots it).  /bin/sh there is dash, the other
# tools are busybox's, but for the real kmod tools and util-linux dmesg.
#
# It runs /opt/module_async/module_async.sh with the arguments given on the
# kernel command line after " -- ", and reports on two serial ports:
#   ttyS0  the console: kernel log, the suite's stdout and stderr
#   ttyS1  the results channel: MODULE_ASYNC_BEGIN, the suite's stdout (its
#          KTAP), then "MODULE_ASYNC_END rc=<exit status>"
# The host takes the results only from ttyS1 and waits for the end marker,
# so nothing is lost if the console drops its last lines when the guest
# goes down.  Then it powers off; after a genuine deadlock a clean power off
# can hang (it waits for the stuck usermode helper), so it falls back to
# sysrq power off, then to sysrq reboot (QEMU runs with -no-reboot).

PATH=/sbin:/bin:/usr/sbin:/usr/bin
export PATH

SUITE=/opt/module_async/module_async.sh
RESULTS=/dev/ttyS1
RC_FILE=/run/module_async.rc

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
mkdir -p /dev/pts /run /tmp
exec </dev/console >/dev/console 2>&1

# A stuck task should be reported long before the host's watchdog expires.
if [ -w /proc/sys/kernel/hung_task_timeout_secs ]; then
	echo 10 >/proc/sys/kernel/hung_task_timeout_secs
fi

# The kernel runs CONFIG_MODPROBE_PATH (/sbin/modprobe) for request_module().
for tool in modprobe insmod rmmod lsmod depmod modinfo; do
	[ -e /sbin/$tool ] || ln -s /bin/kmod /sbin/$tool
done

# Without a second serial port the results go to the console only.
if ! (exec 3>"$RESULTS") 2>/dev/null; then
	echo "guest-init: cannot open $RESULTS: results on the console only"
	RESULTS=/dev/null
fi
# Raw: no CR added to the results, no echo of what the host never sends.
stty -F "$RESULTS" raw -echo 2>/dev/null || true

# Keep the results channel open for the whole run; closing it at the end
# waits until everything written has been sent.
exec 3>"$RESULTS"
echo "MODULE_ASYNC_BEGIN"
echo "MODULE_ASYNC_BEGIN" >&3

if [ -x "$SUITE" ]; then
	{
		"$SUITE" "$@"
		echo $? >"$RC_FILE"
	} | while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		printf '%s\n' "$line" >&3
	done
	rc=$(cat "$RC_FILE" 2>/dev/null || echo 3)
else
	echo "# guest-init: $SUITE is missing or not executable"
	echo "# guest-init: $SUITE is missing or not executable" >&3
	rc=127
fi

echo "MODULE_ASYNC_END rc=$rc"
echo "MODULE_ASYNC_END rc=$rc" >&3
exec 3>&-

poweroff -f &
sleep 5
echo "guest-init: poweroff hangs, trying sysrq power off"
echo o >/proc/sysrq-trigger
sleep 5
echo "guest-init: still up, sysrq reboot"
echo b >/proc/sysrq-trigger
