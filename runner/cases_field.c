// SPDX-License-Identifier: GPL-2.0
/*
 * The cases of loads as modules really load: one task loading after its
 * failed load (a udev worker), two inits at once, a module with async_probe
 * whose init queues async work, and work that takes seconds. Each checks,
 * the moment a load returns, whether its own job is done ("done", read by
 * the loading child right after finit_module()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner.h"

/* A load's "done" read at its return, or -1 if not read. */
static long done_at_return(const struct module_load *load)
{
	return load->child.report.has_value ? load->child.report.value : -1L;
}

/* Prepare @load of @module with @params after the suite's gate_ms. */
static int field_load_init(struct suite *s, struct module_load *load,
			   const char *module, const char *params,
			   char *path, size_t path_len, char *all,
			   size_t all_len)
{
	memset(load, 0, sizeof(*load));
	snprintf(all, all_len, "gate_ms=%d %s", gate_ms(s),
		 params ? params : "");
	load->path = path;
	load->params = all;
	load->knob_after = "done";
	module_name_from_path(load->name, module, sizeof(load->name));
	return module_path(s, module, path, path_len);
}

/*
 * Wait, bounded, until @module's job has started, then until @load is seen
 * held in the sync or has returned: LOAD_HELD, LOAD_RETURNED, or
 * LOAD_RUNNING (neither, or the job never started, within the bound).
 */
static enum load_hold own_job_held(struct suite *s, struct module_load *load,
				   const char *module)
{
	long long deadline = now_us() + s->timeout_ms * 1000LL;
	long started = 0;

	for (;;) {
		if (module_load_wait(load, KNOB_POLL_STEP_MS) != CHILD_RUNNING)
			return LOAD_RETURNED;
		if (!knob_read_long(module, "started", &started) && started)
			return load_wait_held(s, load, s->timeout_ms);
		if (now_us() >= deadline)
			return LOAD_RUNNING;
	}
}

/*
 * Open @module's gate and wait, bounded, for @load to return: false, the
 * kernel wedged, if it does not.
 */
static bool open_and_back(struct case_ctx *ctx, struct module_load *load,
			  const char *module)
{
	gate_open(module);
	if (module_load_wait(load, ctx->suite->timeout_ms) != CHILD_RUNNING)
		return true;
	child_describe(&load->child, module);
	log_knobs(module);
	verdict(ctx, KTAP_WEDGED,
		"the load of %s did not return within %d ms of its gate opening",
		module, ctx->suite->timeout_ms);
	return false;
}

static const char *hold_name(enum load_hold hold)
{
	return hold == LOAD_HELD ? "held" : hold == LOAD_RETURNED ?
	       "returned" : "neither seen held nor returned";
}

/* ---- same_task_loads_after_failed_init ---------------------------------- */

/* finit_module() never returns this: the failing load did not fail so. */
#define FAIL_NOT_AS_MEANT	1

struct fail_then_load {
	struct module_load load;	/* ma_async_init's, the second */
	char fail_path[PATH_MAX];	/* ma_fail's .ko */
};

/*
 * In one child, as a udev worker does: load ma_fail (its init returns
 * -ENODEV), then ma_async_init, reading its "done" at the return. A first
 * load that does not fail with ENODEV is reported as FAIL_NOT_AS_MEANT,
 * its errno in err (0: it loaded), and the second is not tried.
 */
static void fail_then_load_in_child(void *arg, struct child_report *report)
{
	struct fail_then_load *t = arg;
	int fd, ret;

	fd = open(t->fail_path, O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? -1 : syscall(__NR_finit_module, fd, "", 0);
	if (!ret || errno != ENODEV) {
		report->ret = FAIL_NOT_AS_MEANT;
		report->err = ret ? errno : 0;
		return;
	}
	close(fd);
	fd = open(t->load.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		report->ret = -1;
		report->err = errno;
		return;
	}
	report->ret = syscall(__NR_finit_module, fd, t->load.params, 0);
	report->err = report->ret ? errno : 0;
	report->end_us = now_us();
	if (!report->ret)
		report->has_value = !knob_read_long(t->load.name, "done",
						    &report->value);
}

/*
 * One task loads ma_fail, whose init fails, then ma_async_init, whose init
 * queues a held job: the second load must be held while its job is, and
 * the job done when it returns. What the failed load left on its task
 * (a group, a flag, a pointer) must not change what the next load waits
 * for.
 */
void case_same_task_loads_after_failed_init(struct case_ctx *ctx)
{
	static struct fail_then_load t;
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[64];
	enum load_hold hold;
	int ret;

	ret = suite_view(s);
	if (!ret)
		ret = field_load_init(s, &t.load, "ma_async_init", NULL, path,
				      sizeof(path), params, sizeof(params));
	if (!ret)
		ret = module_path(s, "ma_fail", t.fail_path,
				  sizeof(t.fail_path));
	if (!ret)
		ret = child_start(&t.load.child, fail_then_load_in_child, &t);
	if (ret) {
		verdict(ctx, ret == -ETIMEDOUT ? KTAP_WEDGED : KTAP_FAIL,
			"cannot load ma_fail then ma_async_init: %s",
			strerror(-ret));
		return;
	}
	hold = own_job_held(s, &t.load, "ma_async_init");
	diag("ma_fail's load failed; the task's load of ma_async_init: %s while its job is",
	     hold_name(hold));
	if (!open_and_back(ctx, &t.load, "ma_async_init"))
		return;
	if (t.load.child.status == CHILD_REPORTED &&
	    t.load.child.report.ret == FAIL_NOT_AS_MEANT) {
		verdict(ctx, KTAP_FAIL, "loading ma_fail gave %s, not ENODEV",
			t.load.child.report.err ?
			strerror(t.load.child.report.err) : "success");
		return;
	}
	ret = module_load_result(&t.load);
	diag("at its return: done=%ld", done_at_return(&t.load));
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading ma_async_init failed: %s",
			strerror(-ret));
	else if (done_at_return(&t.load) != 1)
		verdict(ctx, KTAP_FAIL,
			"after a failed load, the same task's next load returned before its async job was done");
	else if (hold != LOAD_HELD)
		verdict(ctx, KTAP_FAIL,
			"the load was not seen held while its job was");
}

/* ---- concurrent_loads_wait_for_their_own -------------------------------- */

struct overlap_load {
	const char *module;
	struct module_load load;
	char path[PATH_MAX];
	char params[64];
};

/* Start @o's load and wait, bounded, until its job and its init hold. */
static int overlap_start(struct suite *s, struct overlap_load *o)
{
	int ret;

	ret = field_load_init(s, &o->load, o->module, NULL, o->path,
			      sizeof(o->path), o->params, sizeof(o->params));
	if (!ret)
		ret = module_load_start(&o->load);
	if (!ret)
		ret = knob_wait_long(o->module, "held", 2, s->timeout_ms, NULL);
	return ret;
}

/* Open both loads' gates and wait for both: false if one is stuck. */
static bool overlap_end(struct case_ctx *ctx, struct overlap_load *o,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		gate_open(o[i].module);
	for (i = 0; i < n; i++)
		if (o[i].load.child.pid &&
		    !open_and_back(ctx, &o[i].load, o[i].module))
			return false;
	return true;
}

/*
 * ma_storm_0's and ma_storm_1's loads, from two tasks, both in their init
 * at once, each init's job queued from its own task and held. Once both
 * inits are back, both loads must be held; opening ma_storm_0's gate must
 * let that load return, its job done, while ma_storm_1's stays
 * held on its own; then that one returns, its job done. A kernel where a
 * load whose init uses async waits for all async work cannot keep this:
 * a skip, as plain_load_skips_unrelated_async's.
 */
void case_concurrent_loads_wait_for_their_own(struct case_ctx *ctx)
{
	static struct overlap_load o[2] = {
		{ .module = "ma_storm_0" }, { .module = "ma_storm_1" },
	};
	struct suite *s = ctx->suite;
	enum load_hold hold[2];
	long long opened_at;
	size_t i;
	int ret;

	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	if (skip_if_waits_for_all(ctx))
		return;
	ret = suite_view(s);
	for (i = 0; i < 2; i++) {
		memset(&o[i].load, 0, sizeof(o[i].load));
		if (!ret)
			ret = overlap_start(s, &o[i]);
	}
	if (ret) {
		for (i = 0; i < 2; i++)
			log_knobs(o[i].module);
		if (overlap_end(ctx, o, 2))
			verdict(ctx, KTAP_FAIL,
				"cannot hold both inits, each with its job held: %s",
				strerror(-ret));
		return;
	}
	diag("both inits hold, each with its job held");
	for (i = 0; i < 2; i++)
		knob_write(o[i].module, "open_first", "1");
	for (i = 0; i < 2; i++)
		hold[i] = load_wait_held(s, &o[i].load, s->timeout_ms);
	diag("both inits back: %s's load %s, %s's %s", o[0].module,
	     hold_name(hold[0]), o[1].module, hold_name(hold[1]));
	if (hold[0] != LOAD_HELD || hold[1] != LOAD_HELD) {
		if (!overlap_end(ctx, o, 2))
			return;
		for (i = 0; i < 2; i++)
			diag("%s's load back, done=%ld at its return",
			     o[i].module, done_at_return(&o[i].load));
		verdict(ctx, KTAP_FAIL,
			"a load %s while its job was held",
			hold[0] == LOAD_RETURNED || hold[1] == LOAD_RETURNED ?
			"returned" : "was neither seen held nor returned");
		return;
	}

	/* The first load's own job let go: it returns, the other does not. */
	opened_at = now_us();
	gate_open(o[0].module);
	if (module_load_wait(&o[0].load, s->timeout_ms) == CHILD_RUNNING) {
		log_knobs(o[0].module);
		if (!overlap_end(ctx, o, 2))
			return;
		verdict(ctx, KTAP_FAIL,
			"%s's load, its job done, returned only once %s's job was let go: it waited for another load's async work",
			o[0].module, o[1].module);
		return;
	}
	hold[1] = load_wait_held(s, &o[1].load, s->timeout_ms);
	diag("%s's load returned %.1f ms after its gate opened, done=%ld; %s's is %s",
	     o[0].module, ms(o[0].load.child.report.end_us - opened_at),
	     done_at_return(&o[0].load), o[1].module, hold_name(hold[1]));
	if (!overlap_end(ctx, o, 2))
		return;
	diag("%s's load back, done=%ld at its return", o[1].module,
	     done_at_return(&o[1].load));
	for (i = 0; i < 2; i++) {
		ret = module_load_result(&o[i].load);
		if (ret) {
			verdict(ctx, KTAP_FAIL, "loading %s failed: %s",
				o[i].module, strerror(-ret));
			return;
		}
		if (done_at_return(&o[i].load) != 1) {
			verdict(ctx, KTAP_FAIL,
				"%s's load returned before its async job was done",
				o[i].module);
			return;
		}
	}
	if (hold[1] != LOAD_HELD)
		verdict(ctx, KTAP_FAIL,
			"%s's load %s while its job was held, the other load back",
			o[1].module, hold_name(hold[1]));
}

/* ---- async_probe_own_work_not_waited ------------------------------------ */

/*
 * ma_async_init loaded with async_probe=1: its init queues a held job, and
 * the load must return while the job is held (promise (d): async_probe
 * skips the wait, for the module's own work too).
 */
void case_async_probe_own_work_not_waited(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	struct module_load load;
	char path[PATH_MAX], params[64];
	enum load_hold hold;
	long done;
	int ret;

	ret = suite_view(s);
	if (!ret)
		ret = field_load_init(s, &load, "ma_async_init",
				      "async_probe=1", path, sizeof(path),
				      params, sizeof(params));
	if (!ret)
		ret = module_load_start(&load);
	if (ret) {
		verdict(ctx, ret == -ETIMEDOUT ? KTAP_WEDGED : KTAP_FAIL,
			"cannot start loading ma_async_init: %s",
			strerror(-ret));
		return;
	}
	hold = own_job_held(s, &load, "ma_async_init");
	if (!open_and_back(ctx, &load, "ma_async_init"))
		return;
	done = done_at_return(&load);
	diag("with async_probe=1 the load %s while its job was held; done=%ld at its return",
	     hold_name(hold), done);
	ret = module_load_result(&load);
	if (ret)
		verdict(ctx, KTAP_FAIL,
			"loading ma_async_init with async_probe=1 failed: %s",
			strerror(-ret));
	else if (hold != LOAD_RETURNED || done != 0)
		verdict(ctx, KTAP_FAIL,
			"with async_probe=1 the load waited for its own async work");
}

/* ---- slow_own_work_waited ----------------------------------------------- */

/*
 * ma_slow's init queues a job that runs for work_ms (two seconds, a disk
 * spinning up): the load must last as long, its job done at its return.
 * The bound is the suite's beyond the job's time; a load still running
 * then is stuck.
 */
void case_slow_own_work_waited(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	struct module_load load;
	char path[PATH_MAX], params[64];
	long work_ms = -1;
	int ret;

	ret = field_load_init(s, &load, "ma_slow", NULL, path, sizeof(path),
			      params, sizeof(params));
	if (!ret)
		ret = module_load_start(&load);
	if (!ret)
		ret = knob_wait_long("ma_slow", "started", 1, s->timeout_ms,
				     NULL);
	knob_read_long("ma_slow", "work_ms", &work_ms);
	if (ret && module_load_wait(&load, 0) == CHILD_RUNNING) {
		verdict(ctx, KTAP_FAIL, "ma_slow's job did not start: %s",
			strerror(-ret));
		return;
	}
	if (module_load_wait(&load, s->timeout_ms + (work_ms > 0 ? work_ms : 0)) ==
	    CHILD_RUNNING) {
		child_describe(&load.child, "load of ma_slow");
		verdict(ctx, KTAP_WEDGED,
			"the load of ma_slow did not return within %d ms of its job's %ld ms",
			s->timeout_ms, work_ms);
		return;
	}
	ret = module_load_result(&load);
	diag("the load took %.1f ms, its job runs %ld ms; done=%ld at its return",
	     ms(child_elapsed_us(&load.child)), work_ms,
	     done_at_return(&load));
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading ma_slow failed: %s",
			strerror(-ret));
	else if (done_at_return(&load) != 1)
		verdict(ctx, KTAP_FAIL,
			"the load returned while its %ld ms job was still running",
			work_ms);
}
