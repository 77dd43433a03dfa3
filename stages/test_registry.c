/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stage types of the test binary (pipefwd-test): every production type
 * plus the test-only ones (delay). Overrides the weak list of registry.c.
 */
#include <stddef.h>

#include "pf_stage.h"

extern const struct pf_stage_ops pf_delay_ops;

static const struct pf_stage_ops *const types[] = {
	PF_STAGE_TYPES_PRODUCTION,
	&pf_delay_ops,
	NULL,
};

const struct pf_stage_ops *const *const pf_stage_types = types;
