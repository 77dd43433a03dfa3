/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Logging for the control path (never from process_burst).
 */
#ifndef PF_LOG_H
#define PF_LOG_H

#include <rte_log.h>

extern int pf_logtype;

#define PF_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pf_logtype, "pipefwd: " fmt "\n", ##__VA_ARGS__)

/** Register the "pipefwd" log type (idempotent). */
void pf_log_init(void);

#endif /* PF_LOG_H */
