/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Fault hooks for the fault tests. The production binary's are weak no-ops
 * (app/runtime/runtime.c, app/control/reload.c, app/control/changes.c,
 * app/console/stats.c); only pipefwd-test links
 * app/test_faults.c, whose hooks read the PIPEFWD_FAULT_* variables
 * (docs/reliability.md), so `pipefwd` itself never looks at them.
 */
#ifndef PF_FAULT_H
#define PF_FAULT_H

#include <stdbool.h>
#include <stdint.h>

/** The mbuf pool size to create instead of @p n (PIPEFWD_FAULT_MBUFS); @p n without a fault. */
uint32_t pf_fault_mbufs(uint32_t n);

/** Whether stage @p name's prepared update must be refused (PIPEFWD_FAULT_UPDATE_REFUSE). */
bool pf_fault_update_refuse(const char *name);

/**
 * The unsaved live changes to hold at most instead of @p n (PIPEFWD_FAULT_CHANGES_MAX, 1..@p n):
 * a test reaches the cap in a few changes instead of 256 table rebuilds.
 */
uint32_t pf_fault_changes_max(uint32_t n);

/**
 * Whether a clear must leave the rings' marks unrestarted, as if no producer
 * answered in time (PIPEFWD_FAULT_HWM_LATE): the late path of /pipefwd/rings.
 */
bool pf_fault_hwm_late(void);

#endif /* PF_FAULT_H */
