/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The explicit list of stage types. Adding a stage type: write stages/<type>.c
 * exporting pf_<type>_ops, add it here and to stages/meson.build.
 * (An explicit table, not constructors: static linking drops those.)
 *
 * The list is weak: the test binary (pipefwd-test, built with -Dtests=true)
 * links stages/test_registry.c, whose list adds the test-only types.
 */
#include <stddef.h>

#include "pf_stage.h"


static const struct pf_stage_ops *const types[] = {
	PF_STAGE_TYPES_PRODUCTION,
	NULL,
};

__attribute__((weak)) const struct pf_stage_ops *const *const pf_stage_types = types;
