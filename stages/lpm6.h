/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the lpm6 stage (every file; its parameters are
 * stages/lpm6_routes.c) and its unit tests: the edges and the parsed
 * configuration. Next hops and routes are the routing stages' shared ones
 * (stages/lib/pf_routes_conf.h, the same `nexthops:` syntax as lpm's).
 */
#ifndef PF_LPM6_H
#define PF_LPM6_H

#include "pf_lrn.h"
#include "pf_routes_conf.h"
#include "pf_stage.h"

/* The stage's edges (stages/lpm6.c names them; the parser asks about neigh). */
enum { LPM6_EDGE_DROP, LPM6_EDGE_OUT, LPM6_EDGE_ICMP, LPM6_EDGE_NEIGH, LPM6_EDGE_HOST,
	LPM6_EDGE_MAX };

struct lpm6_cfg {
	struct pf_lrn_conf learnt;   /* `learnt:` (0 routes: none taken; stages/lpm6_learnt.c) */
	struct pf_rconf rt;          /* next hops, routes (af 6), routes_file */
};

/**
 * The stage's parse op: its parameters (nexthops, routes, routes_file,
 * learnt) into a new struct lpm6_cfg stored in sc->cfg; next hops by
 * address need the neigh edge. Route file errors as file:line:col. Returns
 * 0 or -EINVAL / -ENOMEM.
 */
int lpm6_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);
void lpm6_cfg_free(void *cfg);

/** Live change to the parsed routes (the stage's edit op, app/control/pf_changes.h). */
int lpm6_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		  struct pf_errs *errs);
/** Tables lpm6_cfg_edit knows. */
extern const char *const lpm6_edit_tables[];

#endif /* PF_LPM6_H */
