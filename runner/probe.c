// SPDX-License-Identifier: GPL-2.0
/*
 * The run's baseline (how long a plain load takes here, now) and the
 * kernel's policy (does do_init_module() wait for async work the module did
 * not start?), both measured with safe loads beside a job held on a gate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/*
 * A load still running this long after it started counts as "held": a
 * multiple of the slowest of a few plain loads measured in this run, with a
 * floor against a coarse clock. A held load never returns by itself, so the
 * factor only has to cover a plain load's jitter.
 */
#define BASELINE_LOADS		3
#define HOLD_FACTOR		10
#define HOLD_FLOOR_MS		100

const char * const probe_modules[] = { "ma_gate", "ma_plain", NULL };

/*
 * How long a plain load takes here, now: the slowest of a few loads and
 * unloads of ma_plain. Everything "too long" in this run derives from it.
 */
int suite_baseline(struct suite *s)
{
	struct module_load load = { .params = "" };
	char path[PATH_MAX];
	long long slowest = 0;
	int i, ret;

	if (s->baseline_us >= 0)
		return 0;

	module_path(s, "ma_plain", path, sizeof(path));
	load.path = path;
	for (i = 0; i < BASELINE_LOADS; i++) {
		ret = module_load_start(&load);
		if (ret)
			return ret;
		if (module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
			child_describe(&load.child, "baseline load of ma_plain");
			return -ETIMEDOUT;
		}
		ret = module_load_result(&load);
		if (ret)
			return ret;
		if (child_elapsed_us(&load.child) > slowest)
			slowest = child_elapsed_us(&load.child);
		ret = module_unload("ma_plain", s->timeout_ms);
		if (ret)
			return ret;
	}
	s->baseline_us = slowest;
	s->hold_ms = HOLD_FACTOR * (slowest + 999) / 1000;
	if (s->hold_ms < HOLD_FLOOR_MS)
		s->hold_ms = HOLD_FLOOR_MS;
	diag("baseline: a plain load takes %.1f ms (slowest of %d)",
	     ms(slowest), BASELINE_LOADS);
	diag("a load still running after %d ms is held", s->hold_ms);
	return 0;
}

/*
 * Hold an unrelated async job (ma_gate's), load ma_plain with @params and
 * see whether the load returns while the job is held. Then open the gate:
 * a held load must now return (the causality check). Unloads both modules.
 * Returns 0 if it could measure, -errno (with a diagnostic) if not.
 */
int load_beside_held_job(struct suite *s, const char *params,
			 struct held_load *h)
{
	struct module_load load = { .params = params };
	char path[PATH_MAX];
	long long opened;
	int ret;

	memset(h, 0, sizeof(*h));
	ret = suite_baseline(s);
	if (ret) {
		diag("cannot measure a baseline: %s", strerror(-ret));
		h->stuck = ret == -ETIMEDOUT;
		return ret;
	}
	ret = test_module_load(s, "ma_gate", NULL);
	h->stuck = ret == -ETIMEDOUT;
	if (!ret)
		ret = job_start("ma_gate");
	if (!ret)
		ret = knob_wait_long("ma_gate", "started", 1, s->timeout_ms,
				     NULL);
	if (ret) {
		diag("cannot hold an async job with ma_gate: %s",
		     strerror(-ret));
		gate_open("ma_gate");
		return ret;
	}

	module_path(s, "ma_plain", path, sizeof(path));
	load.path = path;
	ret = module_load_start(&load);
	if (ret) {
		diag("cannot start loading ma_plain: %s", strerror(-ret));
		gate_open("ma_gate");
		return ret;
	}
	h->held = module_load_wait(&load, s->hold_ms) == CHILD_RUNNING;

	opened = now_us();
	gate_open("ma_gate");
	if (h->held && module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
		h->stuck = true;
		child_describe(&load.child, "load of ma_plain");
		h->result = -ETIMEDOUT;
		return 0;
	}
	h->result = module_load_result(&load);
	h->load_us = child_elapsed_us(&load.child);
	if (h->held)
		h->after_open_us = load.child.report.end_us - opened;
	diag("ma_plain%s%s: load took %.1f ms, %s",
	     params && *params ? " with " : "", params ? params : "",
	     ms(h->load_us),
	     h->held ? "held until the unrelated job's gate opened" :
		       "while an unrelated async job was held");
	if (h->held)
		diag("it returned %.1f ms after the gate opened",
		     ms(h->after_open_us));

	/* ma_plain's unload would wait for ma_gate's job too. */
	if (job_wait_done(s, "ma_gate"))
		log_knobs("ma_gate");
	module_unload("ma_plain", s->timeout_ms);
	module_unload("ma_gate", s->timeout_ms);
	return 0;
}

static const char *policy_name(enum policy policy)
{
	switch (policy) {
	case POLICY_ALWAYS_SYNC:
		return "always-sync";
	case POLICY_SKIP_IF_UNUSED:
		return "skip-if-unused";
	case POLICY_UNKNOWN:
	case POLICY_UNPROBED:
	default:
		return "unknown";
	}
}

/*
 * Does do_init_module() wait for async work the module did not start? The
 * probe is safe on every kernel: the job it holds is released by its gate.
 * It runs in the first case that needs it; if it does not come back, that
 * case wedged the kernel.
 */
void suite_probe_policy(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	struct held_load h;

	if (s->policy != POLICY_UNPROBED)
		return;
	s->policy = POLICY_UNKNOWN;
	if (!load_beside_held_job(s, NULL, &h) && !h.result) {
		if (!h.held)
			s->policy = POLICY_SKIP_IF_UNUSED;
		else if (!h.stuck)
			s->policy = POLICY_ALWAYS_SYNC;
	}
	diag("policy: %s", policy_name(s->policy));
	if (h.stuck)
		verdict(ctx, KTAP_WEDGED,
			"the policy probe's load did not return within %d ms",
			s->timeout_ms);
}
