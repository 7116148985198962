// SPDX-License-Identifier: GPL-2.0
/*
 * --latency N[,N...]: what unrelated async work costs a module load here.
 * The result "latency", after the cases (alone without --case), gives for
 * each N a load of ma_plain (finit_module(2) from its start to its return)
 * while ma_gate holds N unrelated async jobs on its gate:
 *   # latency: jobs 0: load L ms (median of 3 loads)
 *   # latency: jobs N (W on the gate): load L ms, not held
 *   # latency: jobs N (W on the gate): held, returned A ms after the gate
 * The first is the baseline, no job held. "Not held": the kernel did not
 * wait for the jobs (skip-if-unused, never-sync, own-work), L is the
 * load's latency with them pending. "Held": it waited (always-sync), and
 * A is the time from the gate's opening to the load's return: the N jobs'
 * release and the load's wait for their end. W is how many jobs waited on
 * the gate when the load began: at most as many as the async workqueue
 * runs at once (modules/ma_job.h), the rest pending in it. The result
 * fails when a load could not be measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define PLAIN_LOADS	3

/*
 * The jobs waiting on the gate have settled when all @jobs wait, or when
 * their count has not changed over this many polls (KNOB_POLL_STEP_MS
 * each): the workqueue has started as many workers as it will.
 */
#define SETTLE_POLLS	25

int jobs_settle(struct suite *s, const char *module, unsigned int jobs,
		long *held)
{
	long long deadline = now_us() + s->timeout_ms * 1000LL;
	long last = -1;
	int same = 0, ret;

	for (;;) {
		ret = knob_read_long(module, "held", held);
		if (ret)
			return ret;
		if (*held == (long)jobs)
			return 0;
		same = *held == last ? same + 1 : 0;
		if (same >= SETTLE_POLLS && *held > 0)
			return 0;
		last = *held;
		if (now_us() >= deadline)
			return -ETIMEDOUT;
		sleep_ms(KNOB_POLL_STEP_MS);
	}
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The median of a few loads and unloads of ma_plain, none held: 0 or -errno. */
static int plain_load_median(struct suite *s, long long *median)
{
	long long us[PLAIN_LOADS];
	int i, ret;

	for (i = 0; i < PLAIN_LOADS; i++) {
		ret = plain_load(s, &us[i]);
		if (ret)
			return ret;
	}
	qsort(us, PLAIN_LOADS, sizeof(us[0]), cmp_ll);
	*median = us[PLAIN_LOADS / 2];
	return 0;
}

void latency_run(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	struct held_load h;
	long long us;
	unsigned int i, n;
	int ret;

	ret = plain_load_median(s, &us);
	if (ret) {
		verdict(ctx, ret == -ETIMEDOUT ? KTAP_WEDGED : KTAP_FAIL,
			"a plain load of ma_plain: %s", strerror(-ret));
		return;
	}
	diag("latency: jobs 0: load %.1f ms (median of %d loads)", ms(us),
	     PLAIN_LOADS);
	for (i = 0; i < s->nr_latency; i++) {
		n = s->latency[i];
		ret = load_beside_held_jobs(s, "ma_plain", NULL, n, &h);
		if (h.stuck) {
			verdict(ctx, KTAP_WEDGED,
				"the load beside %u held jobs did not return within %d ms",
				n, s->timeout_ms);
			return;
		}
		if (ret || h.result) {
			verdict(ctx, KTAP_FAIL, "could not measure with %u jobs: %s",
				n, strerror(-(ret ? ret : h.result)));
			return;
		}
		diag("latency: jobs %u (%ld on the gate): %s %.1f ms%s", n,
		     h.jobs_held, h.held ? "held, returned" : "load",
		     ms(h.held ? h.after_open_us : h.load_us),
		     h.held ? " after the gate" : ", not held");
	}
}

/*
 * "1,10,100,1000" in s->latency: false if it is not such a list; every
 * field a number of digits alone (no empty one, as in "1,,2" or ",5,").
 */
bool latency_parse(struct suite *s, const char *arg)
{
	char *copy, *rest, *tok, *end;
	unsigned long n;
	bool ok = true;

	copy = strdup(arg);
	if (!copy)
		return false;
	s->nr_latency = 0;
	for (rest = copy; rest && ok;) {
		tok = strsep(&rest, ",");
		errno = 0;
		n = strtoul(tok, &end, 10);
		ok = *tok >= '0' && *tok <= '9' && !errno && !*end && n >= 1 &&
		     n <= LATENCY_JOBS_MAX &&
		     s->nr_latency < ARRAY_SIZE(s->latency);
		if (ok)
			s->latency[s->nr_latency++] = n;
	}
	free(copy);
	return ok && s->nr_latency;
}
