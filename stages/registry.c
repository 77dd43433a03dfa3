/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The explicit list of stage types. Adding a stage type: write stages/<type>.c
 * exporting pf_<type>_ops, add it here and to stages/meson.build.
 * (An explicit table, not constructors: static linking drops those.)
 */
#include <stddef.h>

#include "pf_stage.h"

extern const struct pf_stage_ops pf_delay_ops;
extern const struct pf_stage_ops pf_rx_ops;
extern const struct pf_stage_ops pf_tx_ops;
extern const struct pf_stage_ops pf_xconnect_ops;
extern const struct pf_stage_ops pf_l2fib_ops;
extern const struct pf_stage_ops pf_acl_ops;
extern const struct pf_stage_ops pf_lpm_ops;
extern const struct pf_stage_ops pf_icmp_ops;

const struct pf_stage_ops *const pf_stage_types[] = {
	&pf_rx_ops,
	&pf_tx_ops,
	&pf_xconnect_ops,
	&pf_l2fib_ops,
	&pf_acl_ops,
	&pf_lpm_ops,
	&pf_icmp_ops,
	&pf_delay_ops,
	NULL,
};
