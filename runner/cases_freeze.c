// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks frozen while a load waits: what suspend does first. A module load
 * beside a held unrelated async job, then the freezer's test mode
 * (CONFIG_PM_DEBUG's /sys/power/pm_test = freezer, "freeze" written to
 * /sys/power/state): every task is frozen, then thawed at once, nothing
 * is suspended. Where a load waits for every async job (always-sync,
 * every kernel since 5.17), it sleeps uninterruptibly in
 * async_synchronize_* (wait_event() in kernel/async.c of 5.10, 6.1, 6.12
 * and 7.2), a task the freezer cannot freeze: freezing fails after
 * pm_freeze_timeout and the write fails (-EBUSY, try_to_freeze_tasks() in
 * kernel/power/process.c), the field's "a module load stuck behind a slow
 * async probe makes suspend fail". That known failure of every stock
 * kernel is reported as KTAP's XFAIL; a failure anywhere else is not ok.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#define PM_STATE		"/sys/power/state"

/*
 * How long the freezer tries (20 s by default): a load that cannot be
 * frozen costs this much. Freezing a VM's user space and freezable
 * kernel threads took 72 and 112 ms under TCG on a busy 2-core host.
 */
#define FREEZE_TIMEOUT_MS	"1000"

/* The knobs the case sets, as found; "" where not read. */
static struct {
	const char *path;
	char found[64];
} knobs[] = {
	{ PM_TEST, "" }, { PM_FREEZE_TIMEOUT, "" }, { PM_TEST_DELAY, "" },
};

/* Why tasks cannot be frozen in test mode here, or NULL if they can. */
static const char *why_no_freezer_test(void)
{
	char states[128];

	if (access(PM_TEST, F_OK))
		return "no " PM_TEST " (CONFIG_PM_DEBUG): no freezer test mode";
	if (sysfs_read(PM_STATE, states, sizeof(states)) ||
	    !strstr(states, "freeze"))
		return "no \"freeze\" in " PM_STATE " (CONFIG_SUSPEND)";
	if (access(PM_FREEZE_TIMEOUT, F_OK))
		return "no " PM_FREEZE_TIMEOUT ": the freezer's wait cannot be shortened";
	if (access(PM_TEST_DELAY, F_OK))
		return "no " PM_TEST_DELAY ": the freezer test would wait 5 s";
	return NULL;
}

/* Async-signal-safe: the signal handler calls it too (runner.h). */
void freeze_knobs_restore(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		if (knobs[i].found[0])
			sysfs_write(knobs[i].path, knobs[i].found);
		knobs[i].found[0] = '\0';
	}
}

/* Save the knobs, then set them for a short freezer test; 0 or -errno. */
static int knobs_set(void)
{
	static const char * const want[] = { "freezer", FREEZE_TIMEOUT_MS, "0" };
	size_t i, len = sizeof(knobs[0].found);
	int ret;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		/* pm_test lists every level, "[none] core ... freezer". */
		ret = i ? sysfs_read(knobs[i].path, knobs[i].found, len) :
			  sysfs_read_selected(PM_TEST, knobs[i].found, len);
		if (ret)
			knobs[i].found[0] = '\0';
		else
			ret = sysfs_write(knobs[i].path, want[i]);
		if (ret) {
			diag("cannot set %s to %s: %s", knobs[i].path, want[i],
			     strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* In a child, bounded: @arg to /sys/power/state, freeze and thaw. */
static void enter_state(void *arg, struct child_report *report)
{
	report->ret = sysfs_write(PM_STATE, arg);
	report->end_us = now_us();
}

/*
 * Freeze and thaw every task in the freezer's test mode, the knobs set:
 * 0, or the write's -errno (-EBUSY: a task refused to freeze);
 * -ETIMEDOUT if it did not return within the suite's bound.
 */
static int freezer_test(struct suite *s)
{
	struct child c;
	int ret = child_start(&c, enter_state, "freeze");

	if (ret)
		return ret;
	if (child_wait(&c, s->timeout_ms) == CHILD_RUNNING) {
		child_describe(&c, "write of freeze to " PM_STATE);
		return -ETIMEDOUT;
	}
	ret = c.status == CHILD_REPORTED ? c.report.ret : -EIO;
	diag("freeze in the freezer's test mode: %s in %.1f ms",
	     ret ? strerror(-ret) : "frozen and thawed",
	     ms(child_elapsed_us(&c)));
	return ret;
}

/*
 * ma_gate's job held, a load of ma_plain started beside it; once the load
 * is seen held (or has returned), freeze. Then the gate opens and the load
 * must return.
 */
void case_freeze_during_held_load(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	const char *why = why_no_freezer_test();
	struct test_load t;
	enum load_hold hold;
	int ret, set, frozen;

	if (why) {
		verdict(ctx, KTAP_SKIP, "%s", why);
		return;
	}
	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	if (!gate_job_held(ctx))
		return;
	ret = test_load_start(s, &t, "ma_plain", NULL);
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot load ma_plain: %s",
			strerror(-ret));
		return;
	}
	hold = load_wait_held(s, &t.load, s->timeout_ms);
	diag("the load of ma_plain %s beside ma_gate's held job",
	     hold == LOAD_HELD ? "is held" : hold == LOAD_RETURNED ?
	     "returned" : "neither returned nor was seen held");
	set = knobs_set();
	frozen = set ? 0 : freezer_test(s);
	freeze_knobs_restore();
	gate_open("ma_gate");
	if (!test_load_back(ctx, &t, "ma_gate's gate opening"))
		return;
	ret = module_load_result(&t.load);
	if (ret) {
		verdict(ctx, KTAP_FAIL, "loading ma_plain failed: %s",
			strerror(-ret));
	} else if (set) {
		verdict(ctx, KTAP_FAIL, "cannot set the freezer's test mode: %s",
			strerror(-set));
	} else if (frozen == -ETIMEDOUT) {
		verdict(ctx, KTAP_FAIL,
			"freezing in test mode did not return within %d ms",
			s->timeout_ms);
	} else if (frozen == -EBUSY && hold == LOAD_HELD &&
		   s->view != TASK_VIEW_NONE && s->policy == POLICY_ALWAYS_SYNC) {
		verdict(ctx, KTAP_XFAIL,
			"tasks could not be frozen: the load sleeps uninterruptibly in %s behind an unrelated job (always-sync)",
			SYNC_FUNCTIONS);
	} else if (frozen) {
		verdict(ctx, KTAP_FAIL,
			"tasks could not be frozen while the load %s: %s",
			hold == LOAD_HELD ? "was held" : "ran",
			strerror(-frozen));
	}
}
