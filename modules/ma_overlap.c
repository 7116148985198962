// SPDX-License-Identifier: GPL-2.0
/*
 * ma_overlap - a module whose init queues async work and stays in its init
 *
 * At boot, and wherever udev runs several workers, inits run at once, and
 * each load must wait for its own async work, not the others'. This
 * module's init queues one job, held on the gate ("open"), then holds
 * itself on the first gate ("open_first"): while it holds, another load
 * (ma_overlap_twin, the same code) can queue its own job inside this
 * load's init. "held" is 2 once both the job and the init wait.
 *
 * The runner (case concurrent_loads_wait_for_their_own) holds both inits,
 * lets them return, then opens one job's gate: that load must return, its
 * job done, while the other stays held on its own.
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_OPEN_FIRST();
MA_KNOB_STARTED();
MA_KNOB_HELD();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_hold();
	ma_job_end(0);
}

static int __init ma_overlap_init(void)
{
	ma_job_queue();
	ma_job_hold_on(&ma_job.first);
	return 0;
}
module_init(ma_overlap_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init queues a held async job, then holds");
MODULE_LICENSE("GPL");
