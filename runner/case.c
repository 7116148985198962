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
 */
void verdict(struct case_ctx *ctx, enum ktap_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->verdict.reason, sizeof(ctx->verdict.reason), fmt, ap);
	va_end(ap);
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
