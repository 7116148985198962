// SPDX-License-Identifier: GPL-2.0
/*
 * ma_async_init - tests that a load waits for the async job its init queued
 *
 * do_init_module() calls async_synchronize_full() after a module's init so
 * that all the async work the module started has finished when the load
 * (finit_module(2), modprobe) returns. This module's init queues one job with
 * async_schedule() and returns at once; the job marks "started", waits on a
 * gate that the runner opens by writing 1 to "open" (or gate_ms expires),
 * then marks "done".
 *
 * The runner (case async_init_completes) starts the load, waits until the job
 * is held, checks that the load does not return while the job is held, opens
 * the gate and checks that "done" is 1 the moment the load returns. Every
 * kernel since 3.8 passes; a kernel that returned from the load early would
 * let modprobe's caller use a module that is still initialising.
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_STARTED();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_hold();
	ma_job_end(0);
}

static int __init ma_async_init_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_async_init_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init queues an async job held on a gate");
MODULE_LICENSE("GPL");
