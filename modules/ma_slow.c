// SPDX-License-Identifier: GPL-2.0
/*
 * ma_slow - a module whose init's async job takes seconds
 *
 * A disk spinning up or a link training keeps a probe busy for seconds,
 * and the load must wait for all of it: a wait bounded by a constant
 * breaks the promise that the work is done when modprobe returns. This
 * module's init queues one job and returns; the job marks "started", runs
 * for work_ms (default 2000) and marks "done". It is not gated: the runner
 * (case slow_own_work_waited) only waits for the load, bounded, and reads
 * "done" the moment it returns.
 */
#include <linux/delay.h>
#include <linux/module.h>

#include "ma_job.h"

/* How long the job runs, in ms: two seconds, a disk's spin-up. */
static unsigned int work_ms = 2000;
module_param(work_ms, uint, 0444);
MODULE_PARM_DESC(work_ms, "how long the async job runs, in ms (default 2000)");

MA_KNOB_GATE_MS();
MA_KNOB_STARTED();
MA_KNOB_DONE();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	msleep(work_ms);
	ma_job_end(0);
}

static int __init ma_slow_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_slow_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init queues an async job that runs for seconds");
MODULE_LICENSE("GPL");
