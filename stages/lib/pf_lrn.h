/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Learnt routes, the part both families share (stages/lib/lrn.c): what the
 * routing daemons said, and the objects the tables point at.
 *
 * Per prefix, each source's target; the lowest source id wins. A target is
 * a code: a learnt id (a next hop by address, an ECMP group, or a fixed drop
 * kind), or a port's connected subnet (PF_LRN_CONN | port). Ids are shared by
 * reference counts and reused after a grace period. A group is 64 buckets
 * of member ids filled by weight; a member on a port whose link is down
 * gives its buckets to the live members (only its flows move).
 *
 * The family's table is reached through struct pf_lrn_ops: the store says
 * which prefix now points where and which id's entry changed; the routing
 * stage (lpm, lpm6) writes its own table. One writer (the control thread).
 */
#ifndef PF_LRN_H
#define PF_LRN_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "pf_flowhash.h"
#include "pf_route.h"
#include "pf_stage_ctl.h"
#include "pf_stage_obs.h"

#define PF_LRN_NONE UINT32_MAX
#define PF_LRN_CONN 0x80000000u     /* | port: the port's connected subnet */
/** Buckets of an ECMP group. */
#define PF_LRN_BUCKETS 64

/** Fixed learnt ids: the drop kinds. */
enum { PF_LRN_BLACKHOLE, PF_LRN_UNREACH, PF_LRN_PROHIBIT, PF_LRN_FIRST };

enum pf_lrn_kind { PF_LRN_FREE = 0, PF_LRN_FIXED, PF_LRN_NH, PF_LRN_GROUP };

/** What the data path reads of a group: each bucket's member id. */
struct pf_lrn_group {
	uint32_t bucket[PF_LRN_BUCKETS];
};

/**
 * Data path: the member id of group @p g for packet @p m. The flow hash
 * picks the bucket (its top 6 bits), so every packet of a flow takes one
 * member; a fragment (the first one too) hashes its addresses only, so a
 * fragmented datagram never splits (as Linux's multipath hash).
 */
static inline uint32_t
pf_lrn_member(const struct pf_lrn_group *g, struct rte_mbuf *m)
{
	uint32_t h = (pf_meta(m)->flags & PF_META_IP_FRAG) ? pf_flow_hash_addr(m) :
		     pf_flow_hash(m);

	RTE_BUILD_BUG_ON(PF_LRN_BUCKETS != 64);
	return __atomic_load_n(&g->bucket[h >> (32 - 6)], __ATOMIC_ACQUIRE);
}

/** A learnt id, as the family's entry writer sees it. */
struct pf_lrn_obj {
	uint32_t refs;
	uint8_t kind;                    /**< enum pf_lrn_kind */
	uint8_t resolved;                /**< next hop: its entry forwards to @p mac */
	uint8_t leaving;                 /**< next hop: lost its neighbour; the entry stays a
					      forward until a grace period after its routes
					      left the fast path (a lookup made before finds
					      the MAC it was made for) */
	uint16_t port;                   /**< next hop's port */
	uint8_t gw[16];                  /**< next hop: address (network order; IPv4 in 4 bytes) */
	uint8_t mac[6];                  /**< next hop, resolved */
	uint32_t group;                  /**< group: index into the groups */
	uint32_t n_members;              /**< group */
	uint32_t member[PF_ROUTE_NH_MAX];
	uint16_t weight[PF_ROUTE_NH_MAX];
	uint32_t assign[PF_LRN_BUCKETS]; /**< group: buckets with every member up */
};

/** The family's table, as the store drives it. */
struct pf_lrn_ops {
	/**
	 * Make @p prefix/@p len point at target @p code (PF_LRN_NONE: no learnt
	 * route any more). Sets *@p in when the table holds it (false: a
	 * configured route has the prefix and wins). 0, or -ENOSPC (full: the
	 * table keeps what it had).
	 */
	int (*install)(void *tbl, const uint8_t *prefix, uint8_t len, uint32_t code, uint8_t *in);
	/** Learnt id @p id was made or changed: write its entry. */
	void (*entry)(void *tbl, uint32_t id, const struct pf_lrn_obj *o);
	/**
	 * Next hops changed resolution (bit per id in @p changed): the flags of
	 * their routes that depend on it (pf_lrn_fast says which way). Optional.
	 */
	void (*resolution)(void *tbl, const uint8_t *changed);
	/** Whether next hop @p o's neighbour is resolved now, and its MAC (the neighbour table). */
	bool (*resolve)(void *tbl, const struct pf_lrn_obj *o, uint8_t *mac);
	/** Whether the table holds @p prefix/@p len at target @p code (a fresh table gone live). */
	bool (*holds)(void *tbl, const uint8_t *prefix, uint8_t len, uint32_t code);
};

/** A stage's `learnt:` key: how many of each the store and its table hold. */
struct pf_lrn_conf {
	uint32_t routes, nexthops, groups;
	uint32_t tbl8;                   /**< the table's groups for long learnt prefixes */
	uint8_t af;                      /**< 4 or 6 */
};

struct pf_errs;

/**
 * Parse `learnt:` of @p sc into @p c for family @p af; all zero (routes 0:
 * the stage takes none) when the key is absent. 0, or -EINVAL with errors.
 */
int pf_lrn_parse(const struct pf_stage_conf *sc, uint8_t af, struct pf_lrn_conf *c,
		 struct pf_errs *errs);

struct pf_lrn;

/** A store, or NULL (ENOMEM). The groups are on @p socket (the data path reads them). */
struct pf_lrn *pf_lrn_create(const struct pf_lrn_conf *c, const char *name, int socket);
/** The store of routing stage @p st (its init), groups on its socket; NULL with an error. */
struct pf_lrn *pf_lrn_open(const struct pf_stage *st, const struct pf_lrn_conf *c,
			   struct pf_errs *errs);
/** NULL-safe. */
void pf_lrn_free(struct pf_lrn *l);

/** What @p l holds room for (its `learnt:` key); all zero for NULL (a stage that takes none). */
const struct pf_lrn_conf *pf_lrn_conf_of(const struct pf_lrn *l);

/** The groups the data path reads (their buckets hold ids). */
const struct pf_lrn_group *pf_lrn_groups(const struct pf_lrn *l);
/** Whether target @p code may take the fast path: a next hop resolved and not leaving. */
bool pf_lrn_fast(const struct pf_lrn *l, uint32_t code);
/** Learnt id @p id's object. */
const struct pf_lrn_obj *pf_lrn_obj(const struct pf_lrn *l, uint32_t id);
uint32_t pf_lrn_ids(const struct pf_lrn *l);

/**
 * Apply @p ops[0..n) of the store's family to the table @p tbl through
 * @p fo; ports checked against @p env; outcomes in @p res. Returns how many
 * ops were of the family (the others are another stage's).
 */
unsigned int pf_lrn_apply(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl,
		  const struct pf_stage_env *env, const struct pf_route_op *ops, unsigned int n,
		  struct pf_route_result *res);

/**
 * A fresh table: every live id's entry, then every route (changes nothing of
 * the store). Returns how many routes did not fit.
 */
uint32_t pf_lrn_fill(const struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl);

/**
 * pf_lrn_fill for routing stage @p st's fresh table: 0, or -ENOSPC with an
 * error when some routes did not fit (a reload refused, a start failed).
 */
int pf_lrn_fill_stage(const struct pf_lrn *l, const struct pf_stage *st,
		      const struct pf_lrn_ops *fo, void *tbl, struct pf_errs *errs);

/** The store's routes the table @p tbl holds now (after a fill went live). */
void pf_lrn_recount(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl);

/**
 * Upkeep: ports down (bit per port in @p down) leave their groups' buckets;
 * next hops follow the neighbour table (fo->resolve); ids and groups come
 * back after their grace period. Returns how many next hops changed resolution.
 */
uint32_t pf_lrn_upkeep(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl, uint32_t down);

struct pf_stage;
struct pf_show;
struct pf_show_req;

/** The columns of a routing stage's routes page (pf_lrn_show's rows fill them). */
#define PF_LRN_SHOW_COLS 6
extern const struct pf_show_col pf_lrn_show_cols[PF_LRN_SHOW_COLS];

/**
 * The store's routes as rows of a routes page (columns prefix, nexthop,
 * port, mac, source, state), those on port req->port only when it is set.
 * NULL-safe (no rows).
 */
void pf_lrn_show(const struct pf_lrn *l, const struct pf_stage_env *env,
		 const struct pf_show_req *req, struct pf_show *sh);

/** Ports of @p st whose link is down now (bit per port; none unless a runtime runs it). */
uint32_t pf_lrn_links_down(const struct pf_stage *st);

/** Whether a routing stage's upkeep is due at @p now_ns (every 100 ms); NULL: never. */
bool pf_lrn_due(struct pf_lrn *l, uint64_t now_ns);

/**
 * A routing stage's upkeep (its ctl.upkeep, when pf_lrn_due): the links of
 * @p st (a change is logged), then pf_lrn_upkeep. Returns how many next hops
 * changed resolution (logged too).
 */
uint32_t pf_lrn_stage_upkeep(struct pf_lrn *l, const struct pf_stage *st,
			     const struct pf_lrn_ops *fo, void *tbl);

/** A route of the store for show: @p fn gets prefix, length, source, target, winner? */
void pf_lrn_each(const struct pf_lrn *l,
		 bool (*fn)(void *arg, const uint8_t *prefix, uint8_t len, uint8_t src,
			    uint32_t code, bool winner, bool installed), void *arg);

/**
 * What a lookup that ends at learnt target @p code does (`route ADDR`):
 * result (route, neighbor, ecmp, connected, blackhole, ...), next hop, port,
 * MAC, an ECMP group's members with their weights.
 */
void pf_lrn_describe(const struct pf_lrn *l, uint32_t code, const struct pf_stage_env *env,
		     struct pf_sink *d);

/** Gauges: learnt_routes, _installed, _shadowed, _nexthops, _groups, _batches, _updates,
 *  routes per source. NULL-safe (none). */
void pf_lrn_gauges(const struct pf_lrn *l, struct pf_sink *out);

#endif /* PF_LRN_H */
