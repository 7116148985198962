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
 * runs at once (modules/ma_job.h), the rest pending in it.
 *
 * --storm N[,N...]: what N loads at once cost each (udev's workers at
 * boot). In the same result, for each N, ma_storm_0 to ma_storm_<N-1>
 * loaded at once, each from its own task, each init queueing one job that
 * runs to its end unheld (its gates open at load), STORM_ROUNDS times:
 *   # storm: loads N: per load L ms (median of R), slowest S ms
 *   # storm: loads N: all back in W ms; D before their job was done
 * L and S of the R loads, W the median round's first fork to its last
 * return, D how many loads returned with their own job not done (none
 * where a load waits for its own work). modules/Makefile builds
 * MA_STORM_NR (default 8) of them; a larger N skips, saying so.
 *
 * The result fails when a load could not be measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* --latency's lines: 0, or a verdict given. */
static int jobs_latency(struct case_ctx *ctx)
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
		return ret;
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
			return -ETIMEDOUT;
		}
		if (ret || h.result) {
			verdict(ctx, KTAP_FAIL, "could not measure with %u jobs: %s",
				n, strerror(-(ret ? ret : h.result)));
			return ret ? ret : h.result;
		}
		diag("latency: jobs %u (%ld on the gate): %s %.1f ms%s", n,
		     h.jobs_held, h.held ? "held, returned" : "load",
		     ms(h.held ? h.after_open_us : h.load_us),
		     h.held ? " after the gate" : ", not held");
	}
	return 0;
}

/* Rounds of each storm: L and S are of STORM_ROUNDS * N loads. */
#define STORM_ROUNDS	3

struct storm {
	struct module_load load[STORM_LOADS_MAX];
	char path[STORM_LOADS_MAX][PATH_MAX];
	long long us[STORM_ROUNDS * STORM_LOADS_MAX];	/* each load's */
	long long wall[STORM_ROUNDS];	/* a round's first fork to last return */
	unsigned int undone;		/* loads back, their job not done */
	bool stuck;			/* a load did not return */
};

static void storm_name(char *buf, size_t len, unsigned int i)
{
	snprintf(buf, len, "ma_storm_%u", i);
}

/*
 * Round @r of @n loads at once into @st; every load that returned unloaded.
 * 0 or -errno; st->stuck if a load did not return.
 */
static int storm_round(struct suite *s, struct storm *st, unsigned int n,
		       unsigned int r)
{
	char name[MA_MODULE_NAME_LEN];
	long long first = 0, last = 0;
	unsigned int i, started;
	int ret = 0, res;

	for (started = 0; started < n && !ret; started++) {
		storm_name(name, sizeof(name), started);
		memset(&st->load[started], 0, sizeof(st->load[0]));
		st->load[started].path = st->path[started];
		st->load[started].params = "open=1";
		st->load[started].knob_after = "done";
		ret = module_path(s, name, st->path[started],
				  sizeof(st->path[0]));
		if (!ret)
			ret = module_load_start(&st->load[started]);
		if (ret)
			break;
	}
	for (i = 0; i < started; i++) {
		storm_name(name, sizeof(name), i);
		if (module_load_wait(&st->load[i], s->timeout_ms) ==
		    CHILD_RUNNING) {
			child_describe(&st->load[i].child, name);
			st->stuck = true;
			ret = ret ? ret : -ETIMEDOUT;
			continue;
		}
		res = module_load_result(&st->load[i]);
		if (!res)
			res = module_unload(name, s->timeout_ms);
		if (res) {
			ret = ret ? ret : res;
			continue;
		}
		st->us[r * n + i] = child_elapsed_us(&st->load[i].child);
		if (!i || st->load[i].child.start_us < first)
			first = st->load[i].child.start_us;
		if (st->load[i].child.report.end_us > last)
			last = st->load[i].child.report.end_us;
		if (!st->load[i].child.report.has_value ||
		    st->load[i].child.report.value != 1)
			st->undone++;
	}
	st->wall[r] = last - first;
	return ret;
}

/* --storm's lines: 0, or a verdict given. */
static int storm_latency(struct case_ctx *ctx)
{
	static struct storm st;
	struct suite *s = ctx->suite;
	char name[MA_MODULE_NAME_LEN], path[PATH_MAX];
	unsigned int i, n, r;
	int ret = 0;

	for (i = 0; i < s->nr_storm; i++) {
		n = s->storm[i];
		storm_name(name, sizeof(name), n - 1);
		if (module_path(s, name, path, sizeof(path)) ||
		    access(path, R_OK)) {
			verdict(ctx, KTAP_SKIP,
				"%u loads at once: no %s (modules/Makefile builds MA_STORM_NR of them, default 8)",
				n, name);
			return -ENOENT;
		}
		memset(&st, 0, sizeof(st));
		for (r = 0; r < STORM_ROUNDS && !ret; r++)
			ret = storm_round(s, &st, n, r);
		if (st.stuck) {
			verdict(ctx, KTAP_WEDGED,
				"%u loads at once: one did not return within %d ms",
				n, s->timeout_ms);
			return ret;
		}
		if (ret) {
			verdict(ctx, KTAP_FAIL, "%u loads at once: %s", n,
				strerror(-ret));
			return ret;
		}
		qsort(st.us, STORM_ROUNDS * n, sizeof(st.us[0]), cmp_ll);
		qsort(st.wall, STORM_ROUNDS, sizeof(st.wall[0]), cmp_ll);
		diag("storm: loads %u: per load %.1f ms (median of %u), slowest %.1f ms",
		     n, ms(st.us[STORM_ROUNDS * n / 2]), STORM_ROUNDS * n,
		     ms(st.us[STORM_ROUNDS * n - 1]));
		diag("storm: loads %u: all back in %.1f ms; %u before their job was done",
		     n, ms(st.wall[STORM_ROUNDS / 2]), st.undone);
	}
	return 0;
}

void latency_run(struct case_ctx *ctx)
{
	if (ctx->suite->nr_latency && jobs_latency(ctx))
		return;
	storm_latency(ctx);
}

/*
 * "1,10,100,1000" into @list (@size entries, *@nr of them filled), each
 * 1 to @max: false if it is not such a list; every field a number of
 * digits alone (no empty one, as in "1,,2" or ",5,").
 */
bool counts_parse(const char *arg, unsigned int max, unsigned int *list,
		  unsigned int *nr, size_t size)
{
	char *copy, *rest, *tok, *end;
	unsigned long n;
	bool ok = true;

	copy = strdup(arg);
	if (!copy)
		return false;
	*nr = 0;
	for (rest = copy; rest && ok;) {
		tok = strsep(&rest, ",");
		errno = 0;
		n = strtoul(tok, &end, 10);
		ok = *tok >= '0' && *tok <= '9' && !errno && !*end && n >= 1 &&
		     n <= max && *nr < size;
		if (ok)
			list[(*nr)++] = n;
	}
	free(copy);
	return ok && *nr;
}
