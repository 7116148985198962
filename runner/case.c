// SPDX-License-Identifier: GPL-2.0
/*
 * What every case uses: its verdict, and the test modules' loads, gates
 * and jobs, each bounded by the suite's timeout.
 */
#include <stdarg.h>
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* The gates' safety timeout, in units of the runner's own timeout. */
#define GATE_MS_FACTOR		3

/*
 * Set the case's verdict, replacing any earlier one. A TIMEOUT is a wait of
 * the suite's bound that expired, but the kernel came back; WEDGED is one
 * that did not come back, a genuine deadlock: nothing more can be loaded or
 * unloaded, so the case ends there, and the run after it (see run_case()).
 * Either needs the wedge's evidence, seen now (wedge_seen(), evidence.c)
 * or already (a cycle proven): a bound that expired says only that a wait
 * was still running, a FAIL that says so, whatever the bound.
 */
void verdict(struct case_ctx *ctx, enum ktap_kind kind, const char *fmt, ...)
{
	static char seen[1024];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(ctx->verdict.reason, sizeof(ctx->verdict.reason), fmt, ap);
	va_end(ap);
	if ((kind == KTAP_TIMEOUT || kind == KTAP_WEDGED) && !ctx->proven_ms &&
	    !wedge_seen(seen, sizeof(seen))) {
		diag("not called a deadlock: %s", seen);
		n = strlen(ctx->verdict.reason);
		snprintf(ctx->verdict.reason + n,
			 sizeof(ctx->verdict.reason) - n,
			 ": still running, no deadlock seen");
		kind = KTAP_FAIL;
	}
	ctx->verdict.kind = kind;
	if (kind == KTAP_TIMEOUT || kind == KTAP_WEDGED)
		ctx->verdict.bound_ms = ctx->suite->timeout_ms;
	if (kind == KTAP_WEDGED)
		ktap_wedge(ctx->c->name);
}

/* Did a wait of the case not end within the bound (wedged or not)? */
bool timed_out(const struct case_ctx *ctx)
{
	return ctx->verdict.kind == KTAP_TIMEOUT ||
	       ctx->verdict.kind == KTAP_WEDGED;
}

/* Has the case found anything but a pass (a failure, a timeout, a skip)? */
bool verdict_given(const struct case_ctx *ctx)
{
	return ctx->verdict.kind != KTAP_PASS;
}

/* A load that failed: a timeout means the kernel is stuck. */
void fail_load(struct case_ctx *ctx, const char *module, int ret)
{
	if (ret == -ETIMEDOUT)
		verdict(ctx, KTAP_WEDGED,
			"loading %s did not return within %d ms", module,
			ctx->suite->timeout_ms);
	else
		verdict(ctx, KTAP_FAIL,
			"cannot load %s: %s", module, strerror(-ret));
}

int module_path(const struct suite *s, const char *module, char *buf,
		size_t len)
{
	int n = snprintf(buf, len, "%s/%s.ko", s->modules_dir, module);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int gate_ms(const struct suite *s)
{
	return GATE_MS_FACTOR * s->timeout_ms;
}

/* Load a test module and wait for the load, with the suite's bound. */
int test_module_load(struct suite *s, const char *module, const char *params)
{
	char path[PATH_MAX], all[512];
	int ret;

	ret = module_path(s, module, path, sizeof(path));
	if (ret)
		return ret;
	snprintf(all, sizeof(all), "gate_ms=%d %s", gate_ms(s),
		 params ? params : "");
	return module_load(path, all, s->timeout_ms);
}

/*
 * Start loading a test module in a child, with the suite's gate_ms and
 * @params, not waiting for it. 0 or -errno.
 */
int test_load_start(struct suite *s, struct test_load *t, const char *module,
		    const char *params)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->module = module;
	ret = module_path(s, module, t->path, sizeof(t->path));
	if (ret)
		return ret;
	snprintf(t->params, sizeof(t->params), "gate_ms=%d %s", gate_ms(s),
		 params ? params : "");
	t->load.path = t->path;
	t->load.params = t->params;
	return module_load_start(&t->load);
}

/*
 * Wait, bounded, for a load test_load_start() started to return: false,
 * the kernel wedged, if it does not within the suite's timeout (@since:
 * what should have let it return).
 */
bool test_load_back(struct case_ctx *ctx, struct test_load *t,
		    const char *since)
{
	char what[128];

	if (module_load_wait(&t->load, ctx->suite->timeout_ms) != CHILD_RUNNING)
		return true;
	snprintf(what, sizeof(what), "load of %s", t->module);
	child_describe(&t->load.child, what);
	verdict(ctx, KTAP_WEDGED, "the load of %s did not return within %d ms of %s",
		t->module, ctx->suite->timeout_ms, since);
	return false;
}

int gate_open(const char *module)
{
	return knob_write(module, "open", "1");
}

int job_start(const char *module)
{
	return knob_write(module, "start", "1");
}

/* Wait until the module's job has finished; 0 or -ETIMEDOUT. */
int job_wait_done(struct suite *s, const char *module)
{
	return knob_wait_long(module, "done", 1, s->timeout_ms, NULL);
}

/*
 * Load ma_gate and hold its job on the gate: true, or false with the
 * case's verdict given.
 */
bool gate_job_held(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	long held;
	int ret = test_module_load(s, "ma_gate", NULL);

	if (ret) {
		fail_load(ctx, "ma_gate", ret);
		return false;
	}
	ret = job_start("ma_gate");
	if (!ret)
		ret = jobs_settle(s, "ma_gate", 1, &held);
	if (ret) {
		gate_open("ma_gate");
		verdict(ctx, KTAP_FAIL, "cannot hold ma_gate's job: %s",
			strerror(-ret));
		return false;
	}
	return true;
}

/*
 * How a held load is seen, found once a run and said in a "#" line: by its
 * stack or wchan; where neither can be read, by its time (the baseline's
 * multiple, probe.c). 0, or -errno if that baseline cannot be measured.
 */
int suite_view(struct suite *s)
{
	int ret;

	if (s->view_known)
		return 0;
	s->view = tasks_view();
	if (s->view == TASK_VIEW_NONE) {
		ret = suite_baseline(s);
		if (ret)
			return ret;
		diag("held: no stack or wchan to read: a load still running after %d ms is held",
		     s->hold_ms);
	} else {
		diag("held: a load seen blocked in %s (%s) is held",
		     SYNC_FUNCTIONS, task_view_name(s->view));
	}
	s->view_known = true;
	return 0;
}

/*
 * Wait until @load is held (seen blocked in do_init_module()'s wait for
 * async work) or has returned, polling its stack for up to @bound_ms: a
 * load that is neither at the bound is LOAD_RUNNING. Without a view of
 * stacks a load still running after the suite's hold_ms counts as held.
 * suite_view() must have succeeded.
 */
enum load_hold load_wait_held(struct suite *s, struct module_load *load,
			      int bound_ms)
{
	long long deadline = now_us() + bound_ms * 1000LL;

	if (s->view == TASK_VIEW_NONE)
		return module_load_wait(load, s->hold_ms) == CHILD_RUNNING ?
		       LOAD_HELD : LOAD_RETURNED;
	for (;;) {
		if (module_load_wait(load, KNOB_POLL_STEP_MS) != CHILD_RUNNING)
			return LOAD_RETURNED;
		if (task_waits_in(load->child.pid, SYNC_FUNCTIONS, s->view) == 1)
			return LOAD_HELD;
		if (now_us() >= deadline)
			return LOAD_RUNNING;
	}
}

/*
 * A deadlock is proven when the blocked tasks' stacks show the same
 * complete wait-for cycle (lib/waitfor.h) at two looks CYCLE_CONFIRM_MS
 * (runner.h) apart while the job is still not done: a load that waits for
 * other async work for a moment has returned by the second look. A look
 * reads every task's state, so it comes only every CYCLE_LOOK_MS.
 */
#define CYCLE_LOOK_MS		25

/*
 * Wait, bounded by the suite's timeout, until @module's job is done (its
 * "done" knob in *@done), or the stacks prove a deadlock. Returns 0 once
 * done, -EDEADLK once proven (the cycle and the time it took are printed,
 * the time kept for verdict_stuck()), -ETIMEDOUT at the bound.
 */
static bool job_done(const char *module, long *done)
{
	return !knob_read_long(module, "done", done) && *done == 1;
}

int job_wait_done_or_cycle(struct case_ctx *ctx, const char *module,
			   long *done)
{
	static struct task_set blocked;
	static char first[1024], line[1024];
	long long begin = now_us(), seen = 0, now;
	/* No cycle closes before the job's request has run a while. */
	long long next_look = begin + CYCLE_LOOK_MS * 1000LL;
	long long deadline = begin + ctx->suite->timeout_ms * 1000LL;

	suite_view(ctx->suite);
	for (;;) {
		if (job_done(module, done))
			return 0;
		now = now_us();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (now >= next_look && ctx->suite->view == TASK_VIEW_STACK) {
			next_look = now + CYCLE_LOOK_MS * 1000LL;
			tasks_read_blocked(&blocked);
			if (!waitfor_cycle(&blocked, line, sizeof(line))) {
				seen = 0;
			} else if (!seen || strcmp(line, first)) {
				seen = now;
				memcpy(first, line, sizeof(first));
			} else if (now - seen >= CYCLE_CONFIRM_MS * 1000LL &&
				   !job_done(module, done)) {
				break;
			}
		}
		sleep_ms(KNOB_POLL_STEP_MS);
	}
	ctx->proven_ms = (now - begin + 999) / 1000;
	diag("deadlock proven %lld ms after the job began, by this wait-for cycle",
	     ctx->proven_ms);
	diag("seen at two looks %lld ms apart:", (now - seen) / 1000);
	diag("  %s", line);
	return -EDEADLK;
}

/*
 * The verdict of a job that did not come back (@ret from
 * job_wait_done_or_cycle()): @what, proven a deadlock by its cycle (the
 * TIMEOUT's time is then the proof's), or not done within the bound.
 */
void verdict_stuck(struct case_ctx *ctx, int ret, const char *what)
{
	if (ret == -EDEADLK) {
		verdict(ctx, KTAP_WEDGED,
			"%s: a deadlock, proven from its wait-for cycle in %lld ms",
			what, ctx->proven_ms);
		ctx->verdict.bound_ms = ctx->proven_ms;
	} else {
		verdict(ctx, KTAP_WEDGED, "%s did not return within %d ms",
			what, ctx->suite->timeout_ms);
	}
}

/* Log a module's knobs as "name: knob=value ..." for the evidence. */
void log_knobs(const char *module)
{
	static const char * const knobs[] = {
		"started", "done", "timed_out", "result", "target", "disk",
	};
	char line[512], value[64];
	size_t i, n;

	n = snprintf(line, sizeof(line), "%s:", module);
	for (i = 0; i < ARRAY_SIZE(knobs) && n < sizeof(line); i++) {
		if (knob_read(module, knobs[i], value, sizeof(value)))
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %s=%s", knobs[i],
			      value);
	}
	diag("%s", line);
}

void log_module_state(const char *name)
{
	char norm[MA_MODULE_NAME_LEN], state[16];

	module_name_normalize(norm, name, sizeof(norm));
	if (module_state(norm, state, sizeof(state)))
		snprintf(state, sizeof(state), "not loaded");
	diag("module %s: %s", norm, state);
}
