// SPDX-License-Identifier: GPL-2.0
/*
 * ma_chained - tests that a load waits for async work chained from its init's
 *
 * An async job may queue another, and modprobe must not return before that
 * one is done either: a SCSI host driver's init queues the scan
 * (scsi_scan_host() -> do_scan_async()), the scan adds the disks, and sd,
 * which prefers asynchronous probing, has each disk probed by a job queued
 * from inside the scan (async_schedule_dev()). A kernel that waits only for
 * the work queued before its wait began returns with the disks missing.
 *
 * This module's init queues job A and returns. A marks "started" and holds
 * on the first job's gate until the runner writes 1 to "open_first"; then it
 * queues job B and ends. B marks "chained" and holds on the gate until the
 * runner writes 1 to "open"; "done" is 1 once B, the chain's last, has
 * ended. "open" opens both gates; gate_ms bounds each wait.
 *
 * The runner (case chained_async_init_completes) sees the load held while A
 * is held, lets A go, sees the load still held while B is, opens the gate
 * and checks that "done" is 1 the moment the load returns. Safe on every
 * kernel: every job ends when its gate opens.
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_OPEN_FIRST();
MA_KNOB_STARTED();
MA_KNOB_HELD();
MA_KNOB_CHAINED();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

/* The data of job B, the one job A queues. */
static int ma_chained_second;

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	if (data != &ma_chained_second) {
		ma_job_begin();
		ma_job_hold_on(&ma_job.first);
		ma_job_queue_next(&ma_chained_second);
	} else {
		WRITE_ONCE(ma_job.chained, 1);
		ma_job_hold();
	}
	ma_job_end(0);
}

static int __init ma_chained_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_chained_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init queues an async job that queues another");
MODULE_LICENSE("GPL");
