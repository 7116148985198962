// SPDX-License-Identifier: GPL-2.0
/*
 * ma_init_request - ma_request whose job the init queues
 *
 * ma_request's code and knobs (target, and open=1 for a gate open from
 * the start, given at load here), and an init that queues its job: a
 * module whose init schedules async work that loads a module. The load
 * waits for the job wherever do_init_module() waits for its init's async
 * work; the job waits for the target's load, which must not wait for the
 * job.
 *
 * Where do_init_module() waits for all async work the target's load waits
 * for the job: a deadlock. With the 3.8 flag too when the target's init
 * uses async itself (ma_nested, the runner's target: case
 * init_async_job_loads_module). Where a load waits only for the async work
 * queued while its init ran, the job is the outer load's and not the
 * target's, and both return.
 */
#include "ma_request.c"

static int __init ma_init_request_init(void)
{
	if (!target[0])
		return -EINVAL;
	ma_job_queue();
	return 0;
}
module_init(ma_init_request_init);
