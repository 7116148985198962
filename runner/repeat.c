// SPDX-License-Identifier: GPL-2.0
/*
 * --repeat N: the suite's cases run N times in one boot, for what one run
 * cannot show: a verdict that changes, memory or references that leak.
 * Only the safe suite repeats: not with --allow-deadlock.
 *
 * One KTAP document, its plan N times the cases plus one. Repetition 1's
 * results name their cases alone, as without --repeat; repetition K (2 to
 * N) names them "<case>.K", so that every result keeps an ID of its own
 * (a lab's, tools/ktap/ktap kernelci-ids: "<case>_K"), and a harness that
 * resumes a wedged run resumes repetition 1's cases. Each repetition
 * begins with
 *   # repeat K/N: Slab S kB, MemAvailable A kB, P kB free on per-CPU lists
 * A case whose verdict (ok, not ok, timeout, skip) differs from its first
 * repetition's fails, saying both. The last result, "repeat_drift",
 * compares the end of the last repetition with the end of the first (which
 * warms the kernel's caches): it fails when a verdict differed, when a
 * module or a reference count of the suite's modules differs, or when Slab
 * grew, or the free memory fell, by more than its bound below: MemAvailable
 * plus the pages on the per-CPU lists, which MemAvailable does not count
 * (pcp_free_kb(): megabytes that come and go with no page leaked). The kernel's
 * count of pending async work (entry_count, kernel/async.c of 6.1 and 7.2)
 * is not readable from user space: every case's cleanup waits for the
 * suite's own jobs instead.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/*
 * Bounds of the drift from the end of repetition 1 to the end of the last:
 * Debian's 6.1 in QEMU, 50 repetitions, showed Slab +168 kB (its noise
 * 60 kB) and MemAvailable -1948 kB, all of it in the first 21; 10
 * repetitions, MemAvailable alone moved by up to 12 MB, in steps of 4 MB
 * (two THPs on a per-CPU list).
 */
#define SLAB_DRIFT_KB		512
#define FREE_DRIFT_KB	4096

#define MEMINFO			"/proc/meminfo"
#define ZONEINFO		"/proc/zoneinfo"
#define DRIFT_CASE		"repeat_drift"

/* Repetition 1's verdict of each case, by its index in the table. */
static enum ktap_kind first_kind[64];
static unsigned int compared, differed;

/* After repetition 1: the modules, and memory. */
static struct ma_state first;
static long first_slab = -1, first_free = -1;

static enum ktap_kind shown(enum ktap_kind kind)
{
	return kind == KTAP_WEDGED ? KTAP_TIMEOUT : kind;
}

static const char *kind_name(enum ktap_kind kind)
{
	switch (shown(kind)) {
	case KTAP_PASS:
		return "ok";
	case KTAP_FAIL:
		return "not ok";
	case KTAP_TIMEOUT:
		return "timeout";
	case KTAP_XFAIL:
		return "xfail";
	case KTAP_SKIP:
	default:
		return "skip";
	}
}

const char *repeat_name(const struct suite *s, const char *name,
			unsigned int k, char *buf, size_t len)
{
	if (!s->repeat || k == 1)
		return name;
	snprintf(buf, len, "%s.%u", name, k);
	return buf;
}

/*
 * Slab, MemAvailable and the free pages on the per-CPU lists, in kB (-1
 * where unreadable); returns the free memory the drift compares: the sum of
 * the last two, or -1.
 */
static long memory(long *slab, long *available, long *pcp)
{
	if (meminfo_kb(MEMINFO, "Slab", slab))
		*slab = -1;
	if (meminfo_kb(MEMINFO, "MemAvailable", available))
		*available = -1;
	if (pcp_free_kb(ZONEINFO, pcp))
		*pcp = -1;
	return *available < 0 || *pcp < 0 ? -1 : *available + *pcp;
}

void repeat_begin(const struct suite *s, unsigned int k)
{
	long slab, available, pcp;

	if (!s->repeat || s->skip_all[0])
		return;
	memory(&slab, &available, &pcp);
	diag("repeat %u/%u: Slab %ld kB, MemAvailable %ld kB, %ld kB free on per-CPU lists",
	     k, s->repeat, slab, available, pcp);
}

void repeat_done(const struct suite *s, unsigned int k)
{
	long available, pcp;

	if (!s->repeat || k != 1 || s->skip_all[0])
		return;
	first_free = memory(&first_slab, &available, &pcp);
	if (found_save(&first))
		first.nr_modules = 0;
}

void repeat_compare(struct case_ctx *ctx, size_t idx, unsigned int k)
{
	enum ktap_kind kind = ctx->verdict.kind;

	if (!ctx->suite->repeat || idx >= ARRAY_SIZE(first_kind))
		return;
	if (k == 1) {
		first_kind[idx] = kind;
		return;
	}
	compared++;
	if (shown(kind) == shown(first_kind[idx]))
		return;
	differed++;
	if (kind == KTAP_PASS || kind == KTAP_SKIP || kind == KTAP_XFAIL) {
		if (ctx->verdict.reason[0])
			diag("%s", ctx->verdict.reason);
		verdict(ctx, KTAP_FAIL,
			"verdict %s here, %s in repetition 1", kind_name(kind),
			kind_name(first_kind[idx]));
	} else {
		diag("verdict %s here, %s in repetition 1", kind_name(kind),
		     kind_name(first_kind[idx]));
	}
}

/* The drift's verdict in @v, the figures as "#" lines. */
static void drift(const struct suite *s, struct ktap_verdict *v)
{
	static char diff[1024];
	long slab, available, pcp, now_free, grew, fell;

	now_free = memory(&slab, &available, &pcp);
	grew = slab - first_slab;
	fell = first_free - now_free;
	diag("repeat: %u repetitions; from the end of the first to the end of the last:",
	     s->repeat);
	diag("repeat: Slab %+ld kB (bound +%d kB), free memory %+ld kB (bound -%d kB)",
	     grew, SLAB_DRIFT_KB, -fell, FREE_DRIFT_KB);
	if (found_diff(&first, diff, sizeof(diff)))
		diag("repeat: modules and references: %s", diff);
	else
		diag("repeat: modules and references: as after the first");
	diag("repeat: async pending: not readable (kernel/async.c keeps its count)");
	diag("repeat: verdicts: %u of %u differ from the first repetition's",
	     differed, compared);
	v->kind = KTAP_FAIL;
	if (differed)
		snprintf(v->reason, sizeof(v->reason),
			 "%u verdicts differ from the first repetition's",
			 differed);
	else if (diff[0])
		snprintf(v->reason, sizeof(v->reason),
			 "modules or references differ: %.200s", diff);
	else if (slab < 0 || first_slab < 0 || now_free < 0 || first_free < 0)
		snprintf(v->reason, sizeof(v->reason),
			 "cannot read Slab and MemAvailable in %s, or %s",
			 MEMINFO, ZONEINFO);
	else if (grew > SLAB_DRIFT_KB)
		snprintf(v->reason, sizeof(v->reason),
			 "Slab grew by %ld kB, more than %d kB", grew,
			 SLAB_DRIFT_KB);
	else if (fell > FREE_DRIFT_KB)
		snprintf(v->reason, sizeof(v->reason),
			 "free memory fell by %ld kB, more than %d kB", fell,
			 FREE_DRIFT_KB);
	else
		v->kind = KTAP_PASS;
}

void repeat_end(const struct suite *s)
{
	struct ktap_verdict v = { .kind = KTAP_SKIP };

	if (!s->repeat || !ktap_may_run(DRIFT_CASE))
		return;
	if (s->skip_all[0])
		snprintf(v.reason, sizeof(v.reason), "%s", s->skip_all);
	else
		drift(s, &v);
	ktap_result(DRIFT_CASE, &v);
}
