// SPDX-License-Identifier: GPL-2.0
/*
 * The block layer's way into the deadlock: an async job writes a modular
 * I/O scheduler's name to a null_blk device's queue/scheduler, and the
 * kernel calls request_module("<name>-iosched") from that job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#define NULL_BLK_DISK	"nullb0"

/*
 * The scheduler a module of the row provides, in @buf; false for the
 * device's driver. elevator_get() requests "<scheduler>-iosched": kyber's
 * module is named so, bfq's carries it as an alias.
 */
static bool elevator_of(const char *module, char *buf, size_t len)
{
	size_t n = strlen(module);

	if (!strcmp(module, "null_blk"))
		return false;
	if (n > strlen("-iosched") &&
	    !strcmp(module + n - strlen("-iosched"), "-iosched"))
		n -= strlen("-iosched");
	snprintf(buf, len, "%.*s", (int)n, module);
	return true;
}

/* Make sure nullb0 exists, loading null_blk with modprobe if needed. */
static bool null_blk_ready(struct case_ctx *ctx, const char *path)
{
	static const char * const argv[] = {
		"modprobe", "null_blk", "nr_devices=1", NULL,
	};
	struct suite *s = ctx->suite;
	int ret;

	if (!access(path, F_OK))
		return true;
	if (knob_exists("null_blk", NULL)) {
		verdict(ctx, KTAP_SKIP,
			"null_blk is loaded but has no %s", NULL_BLK_DISK);
		return false;
	}
	if (!module_available("null_blk")) {
		verdict(ctx, KTAP_SKIP,
			"null_blk is not available to modprobe (modules.dep)");
		return false;
	}
	ret = modprobe((const char * const *)argv, s->timeout_ms);
	if (ret == -ETIMEDOUT)
		verdict(ctx, KTAP_WEDGED,
			"modprobe null_blk did not return within %d ms",
			s->timeout_ms);
	else if (ret)
		verdict(ctx, KTAP_FAIL, "modprobe null_blk failed: %d", ret);
	return !ret;
}

void case_elevator_switch_from_async(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[128], saved[32], active[32], reason[128];
	char what[PATH_MAX + 64];
	const char * const *modules = ctx->c->kernel_modules;
	const char *elevator = NULL, *module = NULL;
	char name[32];
	long result = -1, done = 0;
	size_t i;
	int ret;

	if (skip_if_warn_panics(ctx))
		return;
	/* The first of the row's schedulers that can be loaded here. */
	for (i = 0; modules[i] && !elevator; i++) {
		if (!elevator_of(modules[i], name, sizeof(name)) ||
		    why_not_loadable(ctx, modules[i], reason, sizeof(reason)))
			continue;
		elevator = name;
		module = modules[i];
	}
	if (!elevator) {
		verdict(ctx, KTAP_SKIP,
			"neither kyber-iosched nor bfq can be loaded here (%s)",
			reason);
		return;
	}

	snprintf(path, sizeof(path), "/sys/block/%s/queue/scheduler",
		 NULL_BLK_DISK);
	if (!null_blk_ready(ctx, path))
		return;
	ret = sysfs_read_selected(path, saved, sizeof(saved));
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"cannot read %s: %s", path, strerror(-ret));
		return;
	}

	snprintf(params, sizeof(params), "disk=%s target=%s", NULL_BLK_DISK,
		 elevator);
	ret = test_module_load(s, "ma_elv", params);
	if (ret) {
		fail_load(ctx, "ma_elv", ret);
		return;
	}
	ret = job_start("ma_elv");
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"cannot start ma_elv's job: %s", strerror(-ret));
		return;
	}
	ret = job_wait_done_or_cycle(ctx, "ma_elv", &done);
	if (ret) {
		log_knobs("ma_elv");
		log_module_state(module);
		modules_dump_loading();
		snprintf(what, sizeof(what),
			 "writing %s to %s from an async job", elevator,
			 path);
		verdict_stuck(ctx, ret, what);
		return;
	}
	knob_read_long("ma_elv", "result", &result);
	ret = sysfs_read_selected(path, active, sizeof(active));
	diag("%s: %s -> %s from an async job: result %ld, active now: %s",
	     NULL_BLK_DISK, saved, elevator, result, ret ? "?" : active);
	if (result)
		verdict(ctx, KTAP_FAIL,
			"the async job's write of %s failed: %ld", elevator,
			result);
	else if (ret || strcmp(active, elevator))
		verdict(ctx, KTAP_FAIL,
			"%s is not the active scheduler of %s", elevator,
			NULL_BLK_DISK);

	ret = sysfs_write(path, saved);
	if (ret) {
		diag("cannot restore %s's scheduler %s: %s", NULL_BLK_DISK,
		     saved, strerror(-ret));
		if (!verdict_given(ctx))
			verdict(ctx, KTAP_FAIL, "cannot restore the scheduler");
	}
}
