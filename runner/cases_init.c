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
 * Load the module of fact @id (FACT_OWN: ma_async_init, FACT_WORKER:
 * ma_worker_async), whose init leads to an async job held on a gate. The
 * load must be seen held while the job is (lib/tasks.h: blocked in
 * async_synchronize_*), and the job must be done (its "done" knob, read by
 * the loading child the moment finit_module() returned) when it returns
 * after the gate opened. What was seen is the fact (probe.c).
 */
void init_wait(struct case_ctx *ctx, enum fact_id id)
{
	const char *module = id == FACT_OWN ? "ma_async_init" :
					      "ma_worker_async";
	struct module_load load = { .knob_after = "done" };
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[64];
	long long deadline, started_at, opened_at;
	enum child_status status = CHILD_RUNNING;
	enum load_hold hold = LOAD_RUNNING;
	long started = 0, timed_out = -1;
	int ret;

	ret = suite_view(s);
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
		if (module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
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
		hold = load_wait_held(s, &load, s->timeout_ms);
	if (status != CHILD_RUNNING || hold == LOAD_RETURNED) {
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
		fact_set(s, id, FACT_NO);
		verdict(ctx, KTAP_FAIL,
			"the load returned while its async job was still running");
		return;
	}
	if (hold == LOAD_RUNNING)
		diag("the load neither returned nor was seen held within %d ms",
		     s->timeout_ms);

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
	else
		fact_set(s, id, FACT_YES);
}

void case_async_init_completes(struct case_ctx *ctx)
{
	init_wait(ctx, FACT_OWN);
}

void case_async_worker_init_completes(struct case_ctx *ctx)
{
	init_wait(ctx, FACT_WORKER);
}

/*
 * Load ma_plain beside a held job, with the async_probe option for fact
 * FACT_ASYNC_PROBE: it must not wait for the job. A fact the policy probe
 * measured already is taken as it is (its evidence is above).
 */
static void plain_load_skips(struct case_ctx *ctx, enum fact_id id)
{
	const char *params = id == FACT_ASYNC_PROBE ? "async_probe=1" : NULL;
	enum fact *f = &ctx->suite->facts[id];
	struct held_load h;
	bool held;
	int ret;

	if (*f == FACT_YES || *f == FACT_NO) {
		held = (*f == FACT_YES) == (id == FACT_UNRELATED);
		diag("as the policy probe measured: ma_plain%s%s was %sheld",
		     params ? " with " : "", params ? params : "",
		     held ? "" : "not ");
		if (held)
			verdict(ctx, KTAP_FAIL,
				"the load waited for an unrelated async job");
		return;
	}
	ret = load_beside_held_job(ctx->suite, "ma_plain", params, &h);
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
	if (s->facts[FACT_UNRELATED] == FACT_YES && !s->expect_skip) {
		verdict(ctx, KTAP_SKIP,
			"this kernel waits for unrelated async work on module init");
		return;
	}
	plain_load_skips(ctx, FACT_UNRELATED);
}

void case_async_probe_skips_unrelated_async(struct case_ctx *ctx)
{
	plain_load_skips(ctx, FACT_ASYNC_PROBE);
}

/*
 * Async work an unrelated task queues while a load's init runs: ma_hold's
 * init holds on its gate while the runner queues ma_gate's job and holds
 * it; then ma_hold's gate opens. Is the load, its init back, held by that
 * job? The named policy says (policy_awaits_during_init()): yes where all
 * async work is waited for, and where the work queued while the init ran is
 * (own-work: the job is inside the init's window, whoever queued it); no
 * with the 3.8 flag (the init used no async) or no sync at all. Either way
 * the load must return once the job is done.
 */
void case_unrelated_async_during_init(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	struct test_load t;
	enum load_hold hold;
	enum fact expect;
	int ret;

	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	expect = policy_awaits_during_init(s);
	if (expect == FACT_UNKNOWN) {
		verdict(ctx, KTAP_SKIP,
			"no named policy says whether a load waits for it");
		return;
	}
	ret = test_module_load(s, "ma_gate", NULL);
	if (ret) {
		fail_load(ctx, "ma_gate", ret);
		return;
	}
	ret = test_load_start(s, &t, "ma_hold", NULL);
	if (!ret)
		ret = knob_wait_long("ma_hold", "started", 1, s->timeout_ms, NULL);
	if (!ret)
		ret = job_start("ma_gate");
	if (!ret)
		ret = knob_wait_long("ma_gate", "started", 1, s->timeout_ms, NULL);
	if (ret) {
		log_knobs("ma_hold");
		log_knobs("ma_gate");
		verdict(ctx, KTAP_FAIL,
			"cannot hold ma_hold's init with ma_gate's job queued: %s",
			strerror(-ret));
		return;
	}
	gate_open("ma_hold");
	hold = load_wait_held(s, &t.load, s->timeout_ms);
	diag("ma_hold's init back, the load %s while ma_gate's job is held",
	     hold == LOAD_HELD ? "is held" : hold == LOAD_RETURNED ?
	     "returned" : "neither returned nor was seen held");
	gate_open("ma_gate");
	if (!test_load_back(ctx, &t, "ma_gate's gate opening"))
		return;
	ret = module_load_result(&t.load);
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading ma_hold failed: %s",
			strerror(-ret));
	else if ((hold != LOAD_RETURNED) != (expect == FACT_YES))
		verdict(ctx, KTAP_FAIL,
			"the load %s the unrelated job, unlike its policy",
			expect == FACT_YES ? "did not wait for" : "waited for");
}
