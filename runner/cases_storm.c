// SPDX-License-Identifier: GPL-2.0
/*
 * Many loads at once (udev's workers at boot): each must wait for its own
 * async work, and for no other load's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

/* The loads, ma_storm_0 to ma_storm_<STORM_LOADS - 1> (modules/Makefile). */
#define STORM_LOADS		8

/* Open every gate of the storm's first @n modules and of ma_gate. */
static void storm_release(unsigned int n)
{
	char name[MA_MODULE_NAME_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ma_storm_%u", i);
		gate_open(name);
	}
	gate_open("ma_gate");
}

/*
 * ma_gate's job held, unrelated to the loads; then ma_storm_0 to _7
 * loaded one after the other, each in its init (held on "open_first")
 * with its job queued and held before the next begins, so that every init
 * runs at once. The inits let go, each load must be held; then, in the
 * order they began, each gate opened: that load must return once its own
 * job is done, the later loads' jobs still held, with "done" 1 at its
 * return. Where a load whose init uses async waits for all async work
 * (facts unrelated or older), every load waits for all: a skip.
 */
void case_load_storm(struct case_ctx *ctx)
{
	static struct module_load load[STORM_LOADS];
	static char path[STORM_LOADS][PATH_MAX];
	char name[STORM_LOADS][MA_MODULE_NAME_LEN], params[64];
	struct suite *s = ctx->suite;
	enum load_hold hold[STORM_LOADS];
	unsigned int i, n, waited = 0, undone = 0, unheld = 0;
	int ret = 0, first_waited = -1;
	long done;

	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	if (skip_if_waits_for_all(ctx))
		return;
	ret = suite_view(s);
	if (ret) {
		verdict(ctx, ret == -ETIMEDOUT ? KTAP_WEDGED : KTAP_FAIL,
			"cannot measure a baseline: %s", strerror(-ret));
		return;
	}
	if (!gate_job_held(ctx))
		return;

	snprintf(params, sizeof(params), "gate_ms=%d", gate_ms(s));
	for (n = 0; n < STORM_LOADS && !ret; n++) {
		snprintf(name[n], sizeof(name[n]), "ma_storm_%u", n);
		memset(&load[n], 0, sizeof(load[n]));
		load[n].path = path[n];
		load[n].params = params;
		load[n].knob_after = "done";
		ret = module_path(s, name[n], path[n], sizeof(path[n]));
		if (!ret)
			ret = module_load_start(&load[n]);
		if (!ret)
			ret = knob_wait_long(name[n], "started", 1,
					     s->timeout_ms, NULL);
	}
	if (ret) {
		storm_release(n);
		for (i = 0; i < n; i++)
			module_load_wait(&load[i], s->timeout_ms);
		verdict(ctx, KTAP_FAIL, "cannot hold %s's init with its job: %s",
			name[n - 1], strerror(-ret));
		return;
	}
	for (i = 0; i < n; i++)
		knob_write(name[i], "open_first", "1");
	for (i = 0; i < n; i++) {
		hold[i] = load_wait_held(s, &load[i], s->timeout_ms);
		unheld += hold[i] != LOAD_HELD;
	}
	diag("%u loads in their init at once, beside ma_gate's held job", n);
	diag("their inits back, their jobs held: %u loads held", n - unheld);

	/* In the order they began: a load's own job done, is it back? */
	for (i = 0; i < n; i++) {
		if (hold[i] != LOAD_HELD) {
			gate_open(name[i]);
		} else if (!held_by_own_job(s, name[i], &load[i])) {
			diag("%s: still held once its own job was done",
			     name[i]);
			if (!waited++)
				first_waited = i;
		}
	}
	storm_release(n);
	for (i = 0; i < n; i++) {
		if (module_load_wait(&load[i], s->timeout_ms) == CHILD_RUNNING) {
			child_describe(&load[i].child, name[i]);
			verdict(ctx, KTAP_WEDGED,
				"the load of %s did not return within %d ms of every gate opening",
				name[i], s->timeout_ms);
			return;
		}
		ret = module_load_result(&load[i]);
		if (ret) {
			verdict(ctx, KTAP_FAIL, "loading %s failed: %s",
				name[i], strerror(-ret));
			return;
		}
		done = load[i].child.report.has_value ?
		       load[i].child.report.value : -1L;
		if (done != 1) {
			diag("%s: returned %s its gate opened, done=%ld at return",
			     name[i],
			     hold[i] == LOAD_RETURNED ? "before" : "after",
			     done);
			undone++;
		}
	}
	if (waited)
		verdict(ctx, KTAP_FAIL,
			"%u of %u loads waited past their own job's end (the first %s), later loads' jobs held",
			waited, n, name[first_waited]);
	else if (undone)
		verdict(ctx, KTAP_FAIL,
			"%u of %u loads returned before their own job was done",
			undone, n);
	else if (unheld)
		verdict(ctx, KTAP_FAIL,
			"%u of %u loads were neither seen held nor returned with their job held",
			unheld, n);
}
