/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The stage contract, control side: what a stage's control ops (parse,
 * init, live update, edit; the control thread, never a worker lcore) see
 * of the configuration: its own stage conf, the ports, the clock and the
 * file (struct pf_stage_env), and the helpers they may call (port names,
 * wiring questions, table files, where a live change is saved).
 *
 * Part of the contract (include/): includes nothing of pipefwd's outside
 * include/ and no DPDK header of its own (--check runs it without EAL).
 */
#ifndef PF_STAGE_CTL_H
#define PF_STAGE_CTL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pf_conf.h"
#include "pf_err.h"
#include "pf_meta.h"
#include "pf_route.h"

#define PF_NAME_MAX 32
#define PF_MAX_STAGES 64
#define PF_MAX_EDGES 8           /**< per stage, edge 0 included */
#define PF_MAX_INSTANCES 16      /**< most instances of one stage (instances: N) */
#define PF_NONE 0xffff
#define PF_RXQ_MAX 16            /**< rx queues per port pipefwd polls (queue 0..15) */
#define PF_BURST_DEFAULT 32
#define PF_BURST_MAX 256

struct pf_stage_ops;

/** IPv6 addresses a port may carry (`ipv6:`), besides its MAC-derived link-local. */
#define PF_PORT_IPV6_MAX 4

struct pf_port_conf {
	char name[PF_NAME_MAX];
	const struct pf_node *node;
	char device[1024];         /**< vdev string ("net_pcap0,...") or PCI address */
	bool is_vdev;
	uint16_t rxd, txd;         /**< descriptors per queue */
	uint16_t n_rxq, n_txq;     /**< derived from the stages using the port */
	uint16_t mtu;              /**< IP MTU (`mtu:`, default 1500, like Linux) */
	uint16_t max_frame;        /**< largest untagged frame, FCS excluded: mtu + 14 or `max_frame:` */
	bool has_mac;
	uint8_t mac[6];            /**< used as source MAC when routing out */
	bool has_ipv4;
	uint32_t ipv4;             /**< interface address, host order */
	uint8_t ipv4_len;
	uint8_t n_ipv6;            /**< `ipv6:` addresses (one, or a list of up to PF_PORT_IPV6_MAX) */
	uint8_t ipv6_len[PF_PORT_IPV6_MAX];
	uint8_t ipv6[PF_PORT_IPV6_MAX][16]; /**< interface addresses, network order */
	uint32_t pcap_preload;     /**< packets net_pcap infinite_rx preloads */
	uint8_t rss;               /**< enum pf_rss_mode (pf_portplan.h): symmetric, device, off */
	bool offloads_off;         /**< `offloads: off`: no rx checksum, no tx fast free */
};

/**
 * Whether port index @p pc holds a port: a reload that removed a port
 * leaves its index empty (every field zero) so the others keep theirs.
 */
static inline bool
pf_port_present(const struct pf_port_conf *pc)
{
	return pc->name[0] != '\0';
}

/**
 * A table file a stage's parse read (routes, rules, static MACs): what a
 * reload compares to see that the file changed though the YAML did not.
 */
struct pf_file_stamp {
	char *path;                      /**< as opened (resolved against the topology file) */
	uint64_t size;
	int64_t mtime_ns;
	uint64_t hash;                   /**< 64-bit hash of the content */
	uint64_t ino, dev;               /**< which file: a rename over it shows */
};

/** Largest table file (routes, rules, static MACs) read, in bytes. */
#define PF_TABLE_MAX_BYTES (256u << 20)
#define PF_TABLE_MAX_TEXT "256 MiB"

/**
 * One stage as the runtime runs it. A YAML stage with `instances: N` (N > 1)
 * becomes N consecutive confs named "<name>.0" .. "<name>.<N-1>" that share
 * the YAML node, the type and the edges; `group` keeps the YAML name.
 */
struct pf_stage_conf {
	char name[PF_NAME_MAX];
	char group[PF_NAME_MAX];         /**< the YAML stage name (== name without instances) */
	uint16_t instance;               /**< 0 .. n_instances-1 */
	uint16_t n_instances;            /**< instances: N (1 for a plain stage) */
	uint16_t first;                  /**< index of instance 0 of the group */
	const struct pf_stage_ops *ops;
	const struct pf_node *node;      /**< the stage's whole mapping */
	/** Target per edge (instance 0 of the target group), PF_NONE if unconnected. */
	uint16_t next[PF_MAX_EDGES];
	uint16_t n_inputs;               /**< rings feeding this stage */
	uint32_t burst;                  /**< source stages: port rx burst */
	int lcore;                       /**< from the lcore map, -1 until mapped */
	/* Port use, filled by the stage's parse() so the topology can check it. */
	uint16_t n_rx_ports;
	uint16_t rx_ports[PF_MAX_PORTS];
	uint16_t rx_queue;               /**< the rx queue polled on every rx port */
	/** rx `affine: true`: instance k feeds instance k of a next stage with as many
	 *  instances (RSS already spread the flows), no flow-hash fan-out */
	bool affine;
	/**
	 * Every input picks this stage's instance by the flow hash over its
	 * instances (topology.c mark_flow_picked), so instance k holds only
	 * flows that pick k. With PF_STAGE_KEEPS_FLOW its edges to a stage with
	 * as many instances go straight to instance k: the hash would pick k.
	 */
	bool flow_picked;
	uint16_t n_tx_ports;
	uint16_t tx_ports[PF_MAX_PORTS];
	uint16_t tx_queue[PF_MAX_PORTS]; /**< tx queue per tx port, assigned by the topology */
	void *cfg;                       /**< stage-private config from ops->parse */
	/**
	 * The ports and the rest of the topology this conf belongs to: what a
	 * live update (prepare, swap build) builds for, which differs from the
	 * running st->env when ports are added or removed.
	 */
	const struct pf_stage_env *env;
	uint16_t n_files;                /**< table files parse read (pf_stage_conf_add_file) */
	struct pf_file_stamp *files;
	uint64_t edits;                  /**< hash of the live changes applied to cfg, 0: none */
};

enum pf_clock_mode {
	PF_CLOCK_WALL = 0,   /**< TSC */
	PF_CLOCK_PCAP,       /**< packet timestamps drive time (replay tests of aging) */
};

/**
 * What a stage sees of the topology (its parse, edit and every op through
 * pf_stage.env): the ports (names, MACs, addresses, frame sizes, offloads),
 * the clock, the tx flush interval and the file (relative table paths).
 * Not the other stages, the rings, the lcore map or the EAL arguments:
 * those are the runtime's. Each pf_topo holds its own (pf_topo.env), filled
 * while it loads; a reload hands the stages the new file's.
 */
/** What the runtime found out about a port when it set it up (not configuration). */
struct pf_port_run {
	uint16_t port_id;                 /**< DPDK port id */
	bool rx_cksum_off;                /**< no RX IPv4 checksum offload: rx sums itself */
	/**
	 * The runtime saw the port's link down (polled about every 100 ms on
	 * the control thread, app/runtime/linkwatch.c); 0 while up or not yet
	 * known. A sink reads it (relaxed) only when a send failed: a frame
	 * that cannot leave a port whose link is down is a link_down drop, not
	 * a full queue to retry.
	 */
	uint8_t link_down;
};

struct pf_stage_env {
	const char *file;                 /**< the topology file */
	uint16_t n_ports;                 /**< port indexes used (some may be holes) */
	const struct pf_port_conf *ports; /**< n_ports, by port index (pf_port_present) */
	/** By port index, the runtime's: NULL for a stand-alone stage (unit tests). */
	const struct pf_port_run *run;
	enum pf_clock_mode clock;
	uint32_t tx_flush_us;             /**< runtime.tx_flush_us */
};

/** The DPDK port id of port @p p (stand-alone: the index itself). */
static inline uint16_t
pf_env_port_id(const struct pf_stage_env *env, uint16_t p)
{
	return env->run != NULL ? env->run[p].port_id : p;
}

/** Whether the runtime saw port @p p's link down (stand-alone: never). */
static inline bool
pf_env_link_down(const struct pf_stage_env *env, uint16_t p)
{
	return env->run != NULL && __atomic_load_n(&env->run[p].link_down, __ATOMIC_RELAXED);
}

/** Whether port @p p runs without RX IPv4 checksum offload (stand-alone: it has it). */
static inline bool
pf_env_rx_cksum_off(const struct pf_stage_env *env, uint16_t p)
{
	return env->run != NULL && env->run[p].rx_cksum_off;
}

/** Port index of @p name among @p env's ports, or -1 (stages). */
int pf_stage_port_index(const struct pf_stage_env *env, const char *name);
/**
 * Read a port list parameter ("ports: [p0, p1]") into port indexes.
 * Used by stages that name ports; errors go to @p errs.
 */
int pf_stage_port_list(const struct pf_stage_env *env, const struct pf_node *seq,
		       const char *path, uint16_t *idx, uint16_t max, uint16_t *n,
		       struct pf_errs *errs);
/**
 * Whether some stage wires an edge named @p edge (of a stage of type
 * @p from_type; NULL: any type) to @p sc, which belongs to @p env's
 * topology: the one wiring question a stage's parse may ask (neigh: is any
 * "arp" edge wired to me?).
 */
bool pf_stage_fed_by(const struct pf_stage_env *env, const struct pf_stage_conf *sc,
		     const char *edge, const char *from_type);

/**
 * Record that @p sc's parse reads the table file @p path: its size, mtime,
 * inode and a hash of its content. Call it before reading the file: a file
 * that changes while it is read is then refused (pf_stage_conf_files_check)
 * and an edit racing the read is seen by the next reload. A path that is
 * not a regular file (directory, FIFO, device) or is larger than
 * PF_TABLE_MAX_BYTES is refused here, before any blocking open: -EINVAL
 * with the error at the YAML value naming the file; so is one that cannot
 * be opened or read, and a size-0 file that holds data (/proc).
 * Returns 0, -EINVAL or -ENOMEM. No DPDK.
 */
int pf_stage_conf_add_file(struct pf_stage_conf *sc, const char *path, struct pf_errs *errs);
/**
 * Open a table file for the parsers: never blocks (O_NONBLOCK, regular files
 * only, else NULL with errno EISDIR or EINVAL) and reads at most
 * PF_TABLE_MAX_BYTES (then EOF). Returns a stdio stream or NULL with errno.
 */
FILE *pf_table_fopen(const char *path);
/**
 * After @p sc's parse: refuse every table file that changed while it was
 * read (size, mtime, inode or content differ from the stamp taken before),
 * and in errors from index @p first on, do not echo content of a file that
 * does not look like a table (its first entry line does not parse: a file
 * named by mistake, or a secret one): position only. Returns 0 or -EINVAL.
 */
int pf_stage_conf_files_check(struct pf_stage_conf *sc, unsigned int first,
			      struct pf_errs *errs);

#define PF_CHANGE_TEXT_MAX 200

/**
 * One live table change (app/control/changes.c): added to or deleted from a stage's
 * table without editing a file. The stage's edit op applies it to a freshly
 * parsed configuration and fills in where the change belongs in the files,
 * so that `pipefwd-ctl changes --save` can write it back.
 */
struct pf_change {
	char stage[PF_NAME_MAX];          /**< the YAML stage (group) name */
	char table[16];                   /**< "routes", "rules", "macs" */
	bool del;                         /**< delete (else add) */
	char entry[PF_CHANGE_TEXT_MAX];   /**< the entry as a table-file line (edit normalises it) */
	char key[128];                    /**< what identifies it (prefix, MAC [domain], rule) */
	/* Filled by edit: where the change goes in the files. */
	char file[PATH_MAX];              /**< del: declared there; add: the table file or topology */
	int line;                         /**< del: its line; add to a topology list: the last item's */
	int col;                          /**< >0: an item of a YAML list at this column (inline) */
	char item[PF_CHANGE_TEXT_MAX + 40]; /**< add inline: the YAML list item text */
};

/*
 * For stages' edit ops (app/control/changes.c): where a change goes when saved.
 *
 * pf_change_add_at: an added entry goes to the table file @p file when the
 * stage has one (""), else as YAML list item @p item after the last item of
 * the stage's inline list @p key (or into a new list at the stage's keys).
 */
void pf_change_add_at(struct pf_change *ch, const struct pf_stage_conf *sc, const char *key,
		      const char *file, const char *item);
/** A deleted entry was item @p item of an inline list in the topology file. */
void pf_change_del_item(struct pf_change *ch, const struct pf_node *item);
/** A deleted entry was line @p line of table file @p file. */
void pf_change_del_line(struct pf_change *ch, const char *file, int line);

struct pf_stage;
struct pf_sink;

/**
 * A live update by table swap, the common case (lpm, lpm6, acl): build a
 * new table beside the running one, publish it with one pointer store,
 * free the old one once no worker can still read it. The runtime does the
 * three steps (app/runtime/stage.c, pf_stage_prepare/commit/release) for a
 * stage that gives this instead of prepare/commit/release.
 */
struct pf_stage_swap {
	/** Offset of the table pointer in the stage's priv (read by the data path). */
	size_t table_off;
	/** Build the table @p sc describes into *@p out. Returns 0 or -errno with errors. */
	int (*build)(struct pf_stage *st, const struct pf_stage_conf *sc, void **out,
		     struct pf_errs *errs);
	/** Free a table no reader can see (a refused new one, or the old after the grace). */
	void (*free)(void *table);
	/** Optional: @p table, built from @p sc, is published now (gauges, what @p sc sets). */
	void (*published)(struct pf_stage *st, const struct pf_stage_conf *sc, const void *table);
};

/**
 * Control ops: the control thread calls them (start, reload, live changes,
 * shutdown), never two at a time for one stage and never from a worker.
 * parse and edit run without DPDK (pipefwd --check).
 */
/**
 * What an edge carries and a stage takes, so that --check refuses wiring
 * that can never work (rx's ipv6 edge into lpm, lpm6's icmp edge into icmp).
 */
#define PF_CARRY_IPV4      0x001   /**< IPv4 packets as rx classified them */
#define PF_CARRY_IPV6      0x002   /**< IPv6 packets as rx classified them */
#define PF_CARRY_ARP       0x004
#define PF_CARRY_OTHER     0x008   /**< any other EtherType */
#define PF_CARRY_ICMP4     0x010   /**< IPv4 packets owed an ICMP error (in md->nexthop) */
#define PF_CARRY_ICMP6     0x020   /**< IPv6 packets owed an ICMPv6 error */
#define PF_CARRY_FRAG4     0x040   /**< IPv4 datagrams to fragment (md->out_port set) */
#define PF_CARRY_NEIGH4    0x080   /**< IPv4 packets waiting for a neighbour's MAC */
#define PF_CARRY_NEIGH6    0x100   /**< IPv6 packets and ND messages for the neighbour table */
#define PF_CARRY_ROUTED    0x200   /**< decided: md->out_port set, for a sink */
#define PF_CARRY_HOST      0x400   /**< for the host interfaces */

struct pf_stage_ctl {
	const char *const *param_keys;    /**< stage keys besides type/next/burst, NULL-ended */
	/** PF_CARRY_* the stage can work on; 0: anything (it passes packets on or sends them). */
	uint16_t takes;
	/** Per edge, PF_CARRY_* it carries; NULL: what came in (acl, xconnect pass it on). */
	const uint16_t *edge_carries;

	/**
	 * Check the stage's parameters and read its table files, without DPDK.
	 * Fills sc->cfg (freed with cfg_free) and sc's port use. Runs for
	 * --check, at start and on reload. Returns 0 or -EINVAL with errors.
	 */
	int (*parse)(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);
	void (*cfg_free)(void *cfg);

	/** Build DPDK objects (tables) from st->conf->cfg. */
	int (*init)(struct pf_stage *st, struct pf_errs *errs);

	/**
	 * Reload, before anything is prepared: can the update apply @p new_sc
	 * live? Returns 0, or -EINVAL with an error naming the key that needs a
	 * restart (the reload is then refused as a whole). Optional.
	 */
	int (*check)(const struct pf_stage *st, const struct pf_stage_conf *new_sc,
		     struct pf_errs *errs);
	/**
	 * Reload, so that it applies to every stage or to none: prepare builds
	 * what @p new_sc needs (new tables beside the running ones, a posted
	 * command the owning lcore has taken) without changing what runs, into
	 * *@p prep; it may refuse (-errno with errors). Once every changed stage
	 * has prepared, commit publishes @p prep (it cannot fail) and returns the
	 * state it replaced, or NULL; the runtime waits one grace period for the
	 * whole reload (no worker reads the old state any more) and then hands
	 * that back to release. If any stage refused, each prepared one gets its
	 * @p prep to release instead (nothing changed). A stage gives either
	 * these three or swap; neither means table changes need a restart.
	 */
	int (*prepare)(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		       struct pf_errs *errs);
	void *(*commit)(struct pf_stage *st, const struct pf_stage_conf *new_sc, void *prep);
	void (*release)(struct pf_stage *st, void *state);
	const struct pf_stage_swap *swap;

	/**
	 * Live table change: apply @p ch to @p sc->cfg right after parse (no
	 * DPDK; the runtime then updates the stage as a reload does). Normalises
	 * ch->entry, sets ch->key and the save location. Returns 0, or -EINVAL
	 * (bad entry), -EEXIST, -ENOENT (no such entry), -ENOSPC (table full),
	 * each with an error in @p errs. Optional: NULL means no live changes.
	 */
	int (*edit)(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		    struct pf_errs *errs);
	/** Tables edit() knows ("routes", ...), NULL-ended. */
	const char *const *edit_tables;

	/**
	 * Act on the running table, not on its configuration (/pipefwd/flush):
	 * @p what "flush" removes learned entries matching @p args ("port=P",
	 * "domain=D", "" for all) through the owning lcore; reports the outcome
	 * into @p out. Optional.
	 */
	int (*act)(struct pf_stage *st, const char *what, const char *args, struct pf_sink *out);

	/**
	 * The table this stage lets the stages wired to it read (neigh: the
	 * neighbour table lpm and lpm6 resolve next hops in), once init made
	 * it: the runtime hands it to each of them in pf_stage.edge_table
	 * before their init (types with PF_STAGE_UPSTREAM_READS init first).
	 * Optional.
	 */
	void *(*export_table)(struct pf_stage *st);

	/**
	 * Learnt routes (include/pf_route.h), routing stages only: apply a batch
	 * of a routing daemon's updates to the running table, the outcome of
	 * each counted in @p res. One batch at a time, between reloads; the data
	 * path never waits. Optional (-ENOTSUP: the stage takes none, or none of
	 * the batch's family).
	 */
	int (*learn)(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
		     struct pf_route_result *res);
	/**
	 * Control-side upkeep, about every 100 ms on the control thread (what
	 * follows the neighbour table or the links in the tables a stage
	 * writes from the control side). Optional.
	 */
	void (*upkeep)(struct pf_stage *st, uint64_t now_ns);
	/**
	 * Host interfaces (the host stage): the kernel interface this stage made
	 * for port @p port, its name into @p name (16 bytes) and its network
	 * namespace into @p ns (64 bytes, "" for pipefwd's own), so route
	 * sources map a daemon's interface to a port. false: the port has none.
	 * Optional.
	 */
	bool (*host_iface)(const struct pf_stage *st, uint16_t port, char *name, char *ns);

	/**
	 * Ports were added or removed live (a reload, pipefwd-ctl port-add or
	 * port-del), or the stage's own `ports:` list changed: st->env and
	 * st->conf are the new topology's already. Ports in @p added (a bit
	 * per port index) are new and already running; those in @p gone are
	 * leaving. Follow the new ports and the stage's port list: fill what
	 * is kept per port for an added index in place (no packet refers to it
	 * yet), publish a changed port list by pointer or with one atomic
	 * store. Control thread, in this order: stages that are not sources
	 * with @p drained false before the changed stages commit (a port that
	 * leaves this stage's list is still sent on: what was routed to it
	 * before the change leaves by it), sources (rx) after, so a new port
	 * is polled only once every stage after rx knows it and a leaving one
	 * no longer is; then, once what was in flight has drained, the stages
	 * that are not sources again with @p drained true: from a grace period
	 * after that call a stage neither polls nor sends on a port it no
	 * longer lists or that is gone (the runtime stops it then). Optional:
	 * a type that keeps nothing per port (and whose `ports:` list, if any,
	 * then needs a restart to change).
	 */
	void (*ports)(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained);

	/** Release everything init made. NULL-safe on a half-initialised stage. */
	void (*free)(struct pf_stage *st);
};

#endif /* PF_STAGE_CTL_H */
