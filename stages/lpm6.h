/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the lpm6 stage (stages/lpm6.c, stages/lpm6_routes.c) and its
 * unit tests: the parsed configuration. Next hops are lpm's (same
 * `nexthops:` syntax, struct lpm_cfg holds them); routes are IPv6 prefixes.
 */
#ifndef PF_LPM6_H
#define PF_LPM6_H

#include <stdint.h>

#include "lpm.h"

struct lpm6_route {
	uint8_t prefix[16];     /* network order, host bits clear */
	uint32_t nh;            /* index into lpm6_cfg.base.nh */
	uint32_t line;          /* where it was defined (file or topology line) */
	uint16_t col;
	uint8_t len;
	uint8_t from_file;      /* 1: routes_file, 0: inline in the topology */
};

struct lpm6_cfg {
	struct lpm_cfg base;    /* next hops and routes_file; base.routes stays empty */
	/* Next hops by address (a route's `via: ADDRESS`): gw6[k] for base.nh[k], :: if static. */
	uint8_t gw6[LPM_MAX_NEXTHOPS][16];
	uint32_t n_routes, cap_routes;
	struct lpm6_route *routes;  /* sorted by prefix, then length (lpm6_cfg_parse) */
};

/**
 * Parse the stage's parameters (nexthops, routes, routes_file) into a new
 * struct lpm6_cfg stored in sc->cfg; route file errors as file:line:col.
 * Returns 0 or -EINVAL / -ENOMEM.
 */
int lpm6_cfg_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);
void lpm6_cfg_free(void *cfg);

/** Live change to the parsed routes (the stage's edit op, app/control/pf_changes.h). */
/** The stage has its neigh edge wired (a live route may name a gateway by address). */
bool lpm6_edit_neigh_wired(const struct pf_stage_conf *sc);
int lpm6_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		  struct pf_errs *errs);
/** Tables lpm6_cfg_edit knows. */
extern const char *const lpm6_edit_tables[];

#endif /* PF_LPM6_H */
