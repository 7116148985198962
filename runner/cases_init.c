// SPDX-License-Identifier: GPL-2.0
/*
 * The cases of do_init_module()'s wait: for the async work a module's init
 * started (directly, or through a worker), and for async work it did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/*
 * Load @module, whose init leads to an async job held on a gate. The load
 * must not return while the job is held, and the job must be done (its
 * "done" knob, read by the loading child the moment finit_module()
 * returned) when it does.
 */
static void held_init_completes(struct case_ctx *ctx, const char *module)
{
	struct module_load load = { .knob_after = "done" };
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[64];
	long long deadline, started_at, opened_at;
	enum child_status status = CHILD_RUNNING;
	long started = 0, timed_out = -1;
	int ret;

	ret = suite_baseline(s);
	if (ret == -ETIMEDOUT) {
		verdict(ctx, KTAP_WEDGED,
			"a load or unload of ma_plain did not return within %d ms",
			s->timeout_ms);
		return;
	}
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"cannot measure a baseline: %s", strerror(-ret));
		return;
	}
	snprintf(params, sizeof(params), "gate_ms=%d", gate_ms(s));
	load.path = path;
	load.params = params;
	ret = module_path(s, module, path, sizeof(path));
	if (!ret)
		ret = module_load_start(&load);
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"cannot start loading %s: %s", module, strerror(-ret));
		return;
	}

	/* Until the job is held on its gate, or the load is back. */
	deadline = now_us() + s->timeout_ms * 1000LL;
	for (;;) {
		if (!knob_read_long(module, "started", &started) && started)
			break;
		status = module_load_wait(&load, KNOB_POLL_STEP_MS);
		if (status != CHILD_RUNNING || now_us() >= deadline)
			break;
	}
	started_at = now_us();

	if (status == CHILD_RUNNING && !started) {
		/* A load that does not return once its gate opens is stuck. */
		gate_open(module);
		log_knobs(module);
		if (module_load_wait(&load, s->hold_ms) == CHILD_RUNNING) {
			child_describe(&load.child, "load");
			verdict(ctx, KTAP_WEDGED,
				"the job did not start within %d ms, nor did the load return",
				s->timeout_ms);
		} else {
			verdict(ctx, KTAP_TIMEOUT,
				"the async job did not start within %d ms",
				s->timeout_ms);
		}
		return;
	}
	if (status == CHILD_RUNNING)
		status = module_load_wait(&load, s->hold_ms);
	if (status != CHILD_RUNNING) {
		ret = module_load_result(&load);
		gate_open(module);
		if (ret) {
			verdict(ctx, KTAP_FAIL,
				"loading %s failed: %s", module,
				strerror(-ret));
			return;
		}
		diag("load returned after %.1f ms; the job had %s; done=%ld at return",
		     ms(child_elapsed_us(&load.child)),
		     started ? "started and was held on its gate" :
			       "not started yet",
		     load.child.report.has_value ? load.child.report.value :
						   -1L);
		verdict(ctx, KTAP_FAIL,
			"the load returned while its async job was still running");
		return;
	}

	opened_at = now_us();
	gate_open(module);
	status = module_load_wait(&load, s->timeout_ms);
	if (status == CHILD_RUNNING) {
		child_describe(&load.child, "load");
		log_knobs(module);
		verdict(ctx, KTAP_WEDGED,
			"the load did not return within %d ms of the gate opening",
			s->timeout_ms);
		return;
	}
	ret = module_load_result(&load);
	knob_read_long(module, "timed_out", &timed_out);
	diag("load held %.1f ms with its job, back %.1f ms after the gate opened",
	     ms(opened_at - started_at),
	     ms(load.child.report.end_us - opened_at));
	diag("at its return: done=%ld, timed_out=%ld",
	     load.child.report.has_value ? load.child.report.value : -1L,
	     timed_out);
	if (ret)
		verdict(ctx, KTAP_FAIL,
			"loading %s failed: %s", module, strerror(-ret));
	else if (!load.child.report.has_value || load.child.report.value != 1)
		verdict(ctx, KTAP_FAIL,
			"the load returned before its async job was done");
	else if (timed_out)
		verdict(ctx, KTAP_FAIL,
			"the job was released by its safety timeout, not by the gate");
}

void case_async_init_completes(struct case_ctx *ctx)
{
	held_init_completes(ctx, "ma_async_init");
}

void case_async_worker_init_completes(struct case_ctx *ctx)
{
	held_init_completes(ctx, "ma_worker_async");
}

/* Load ma_plain (with @params) beside a held job: must not wait for it. */
static void plain_load_skips(struct case_ctx *ctx, const char *params)
{
	struct held_load h;
	int ret;

	ret = load_beside_held_job(ctx->suite, params, &h);
	if (h.stuck) {
		verdict(ctx, KTAP_WEDGED,
			"a load did not return within %d ms%s",
			ctx->suite->timeout_ms,
			ret ? "" : " of the unrelated job's gate opening");
	} else if (ret) {
		verdict(ctx, KTAP_FAIL,
			"could not hold an unrelated job and load beside it");
	} else if (h.result) {
		verdict(ctx, KTAP_FAIL,
			"loading ma_plain failed: %s", strerror(-h.result));
	} else if (h.held) {
		verdict(ctx, KTAP_FAIL,
			"the load waited for an unrelated async job (%.1f ms after its gate)",
			ms(h.after_open_us));
	}
}

void case_plain_load_skips_unrelated_async(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;

	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	if (s->policy == POLICY_ALWAYS_SYNC && !s->expect_skip) {
		verdict(ctx, KTAP_SKIP,
			"policy always-sync: this kernel syncs all async work on module init");
		return;
	}
	plain_load_skips(ctx, NULL);
}

void case_async_probe_skips_unrelated_async(struct case_ctx *ctx)
{
	plain_load_skips(ctx, "async_probe=1");
}
