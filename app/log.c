/* SPDX-License-Identifier: BSD-3-Clause */
/* The "pipefwd" log type (include/pf_log.h). */
#include "pf_log.h"

int pf_logtype = RTE_LOGTYPE_USER1;

void
pf_log_init(void)
{
	int t = rte_log_register_type_and_pick_level("pipefwd", RTE_LOG_INFO);

	if (t >= 0)
		pf_logtype = t;
}
