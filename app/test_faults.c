/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fault hooks of the test binary (app/runtime/pf_fault.h): linked into
 * pipefwd-test only, they override the production binary's weak no-ops.
 */
#include <stdlib.h>
#include <string.h>

#include "pf_fault.h"
#include "pf_log.h"

uint32_t
pf_fault_mbufs(uint32_t n)
{
	const char *f = getenv("PIPEFWD_FAULT_MBUFS");

	if (f == NULL || atoi(f) < 512 || (uint32_t)atoi(f) == n)
		return n;
	PF_LOG(WARNING, "PIPEFWD_FAULT_MBUFS: pool of %d mbufs instead of %u", atoi(f), n);
	return (uint32_t)atoi(f);
}

uint32_t
pf_fault_changes_max(uint32_t n)
{
	const char *f = getenv("PIPEFWD_FAULT_CHANGES_MAX");

	if (f == NULL || atoi(f) < 1 || (uint32_t)atoi(f) >= n)
		return n;
	return (uint32_t)atoi(f);
}

bool
pf_fault_update_refuse(const char *name)
{
	const char *f = getenv("PIPEFWD_FAULT_UPDATE_REFUSE");

	return f != NULL && strcmp(f, name) == 0;
}

bool
pf_fault_hwm_late(void)
{
	return getenv("PIPEFWD_FAULT_HWM_LATE") != NULL;
}
