// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own chained async work: a SCSI host's disks. scsi_debug
 * (the kernel's SCSI host emulator, no hardware) registers a host in its
 * init and calls scsi_scan_host(), which, with scsi_mod.scan=async, queues
 * the scan as an async job (do_scan_async()); the scan adds the disks, and
 * sd, which prefers asynchronous probing, has each disk probed by a job
 * queued from inside the scan (async_schedule_dev()). When modprobe
 * returns, every disk must be there.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* One host, one target, two LUNs: two disks. */
#define SCSI_DEBUG_DISKS	2
static const char * const scsi_debug_argv[] = {
	"modprobe", "scsi_debug", "add_host=1", "num_tgts=1", "max_luns=2",
	NULL,
};

/* scsi_debug's disks with a /sys/block entry and a device node now. */
static long scsi_debug_disks(void)
{
	char path[PATH_MAX], model[64];
	struct dirent *d;
	long n = 0;
	DIR *dir;

	dir = opendir("/sys/block");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/device/model",
			 d->d_name);
		if (sysfs_read(path, model, sizeof(model)) ||
		    strncmp(model, "scsi_debug", 10))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", d->d_name);
		n += !access(path, F_OK);
	}
	closedir(dir);
	return n;
}

/* modprobe scsi_debug, then at once the disks there. */
static void load_and_count(void *arg, struct child_report *report)
{
	int timeout_ms = *(int *)arg;

	report->ret = modprobe(scsi_debug_argv, timeout_ms);
	report->end_us = now_us();
	report->value = scsi_debug_disks();
	report->has_value = true;
}

/* Is /dev a devtmpfs, whose nodes the kernel makes as a disk is added? */
static bool dev_is_devtmpfs(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " /dev devtmpfs ");
	fclose(f);
	return found;
}

void case_scsi_debug_disks_ready_on_return(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	static const char * const sd_argv[] = { "modprobe", "sd_mod", NULL };
	char reason[128], scan[16];
	long long deadline;
	struct child c;
	long disks;
	int ret;

	if (skip_unless_loadable(ctx, "scsi_debug"))
		return;
	if (why_not_loadable(ctx, "sd_mod", reason, sizeof(reason)) &&
	    !module_builtin("sd_mod") && !knob_exists("sd_mod", NULL)) {
		verdict(ctx, KTAP_SKIP, "%s", reason);
		return;
	}
	if (!dev_is_devtmpfs()) {
		verdict(ctx, KTAP_SKIP,
			"/dev is no devtmpfs: the disks' nodes come later, from udev");
		return;
	}
	if (!module_builtin("sd_mod") && !knob_exists("sd_mod", NULL)) {
		ret = modprobe(sd_argv, s->timeout_ms);
		if (ret) {
			fail_load(ctx, "sd_mod", ret > 0 ? -EIO : ret);
			return;
		}
	}
	if (knob_read("scsi_mod", "scan", scan, sizeof(scan))) {
		verdict(ctx, KTAP_SKIP, "no scsi_mod.scan to read");
		return;
	}
	if (strcmp(scan, "async")) {
		verdict(ctx, KTAP_SKIP,
			"scsi_mod.scan is %s: the scan is not asynchronous", scan);
		return;
	}
	ret = child_start(&c, load_and_count, &s->timeout_ms);
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot start modprobe scsi_debug: %s",
			strerror(-ret));
		return;
	}
	if (child_wait(&c, s->timeout_ms) == CHILD_RUNNING) {
		child_describe(&c, "modprobe scsi_debug");
		verdict(ctx, KTAP_WEDGED,
			"modprobe scsi_debug did not return within %d ms",
			s->timeout_ms);
		return;
	}
	if (c.status != CHILD_REPORTED || c.report.ret) {
		verdict(ctx, KTAP_FAIL, "modprobe scsi_debug failed (%d)",
			c.report.ret);
		return;
	}
	diag("modprobe scsi_debug took %.1f ms; at its return %ld of its %d disks there",
	     ms(child_elapsed_us(&c)), c.report.value, SCSI_DEBUG_DISKS);
	if (c.report.value != SCSI_DEBUG_DISKS) {
		/*
		 * The disks' probes still run: unloading scsi_debug under
		 * them would hang. Wait for them, bounded, as evidence.
		 */
		deadline = now_us() + s->timeout_ms * 1000LL;
		while ((disks = scsi_debug_disks()) != SCSI_DEBUG_DISKS &&
		       now_us() < deadline)
			sleep_ms(KNOB_POLL_STEP_MS);
		diag("%ld disks there %.1f ms after modprobe returned", disks,
		     ms(now_us() - c.report.end_us));
		/* Nor while a probe holds a reference (an open disk). */
		while (now_us() < deadline &&
		       (sysfs_read("/sys/module/scsi_debug/refcnt", scan,
				   sizeof(scan)) || strcmp(scan, "0")))
			sleep_ms(KNOB_POLL_STEP_MS);
		verdict(ctx, KTAP_FAIL,
			"modprobe scsi_debug returned with %ld of its %d disks there (/sys/block and /dev)",
			c.report.value, SCSI_DEBUG_DISKS);
	}
}
