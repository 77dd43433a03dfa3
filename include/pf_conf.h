/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * YAML configuration tree with source marks and typed accessors.
 *
 * The loader turns a YAML file into an immutable tree of pf_node, keeping the
 * line and column of every node so that any later check can point at the
 * exact spot. It refuses what libyaml accepts silently: duplicate keys,
 * anchors and aliases, non-string keys, and files over PF_CONF_MAX_BYTES.
 *
 * Accessors take a "path" (e.g. "rings.r1.size") used in messages, append an
 * error to a struct pf_errs on failure and return -EINVAL; they never print.
 */
#ifndef PF_CONF_H
#define PF_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pf_err.h"

#define PF_CONF_MAX_BYTES (1u << 20)
#define PF_CONF_PATH_MAX 160

enum pf_node_kind {
	PF_NODE_SCALAR,
	PF_NODE_SEQ,
	PF_NODE_MAP,
};

struct pf_node {
	enum pf_node_kind kind;
	const char *file;         /**< owned by the document */
	int line;                 /**< 1-based */
	int col;                  /**< 1-based */
	const char *value;        /**< scalar text (NULL for seq/map) */
	bool quoted;              /**< scalar was quoted: always a string */
	uint32_t n;               /**< items in a seq, pairs in a map */
	struct pf_node **keys;    /**< map keys (scalars), n of them */
	struct pf_node **items;   /**< seq items or map values, n of them */
};

struct pf_doc {
	char *file;
	struct pf_node *root;     /**< NULL for an empty document */
};

/** "a FIFO", "a directory", "a character device", ... for a struct stat's st_mode. */
const char *pf_file_kind(unsigned int mode);

struct stat;
/**
 * Open @p path for reading without blocking: a FIFO with no writer, a tty or
 * a device would block a plain open (and --check, a reload or the control
 * socket with it). Regular files only, of at most @p max bytes. Returns the
 * fd (with *@p sb filled), or -errno; *@p kind is then "a FIFO", "a
 * directory", "a character device", ... when the file is not a regular one
 * (-EISDIR or -EINVAL), else NULL (-EFBIG when it is over @p max).
 */
int pf_file_open_regular(const char *path, uint64_t max, struct stat *sb, const char **kind);

/** Load @p path (opened as pf_file_open_regular does). On failure fills @p errs and
 * returns -errno; *out is NULL. */
int pf_conf_load_file(const char *path, struct pf_doc **out, struct pf_errs *errs);
/** Load from memory; @p name is used as the file name in marks. */
int pf_conf_load_string(const char *name, const char *text, size_t len, struct pf_doc **out,
			struct pf_errs *errs);
void pf_conf_free(struct pf_doc *doc);

/**
 * The offset of the first control character in @p s (@p len bytes: C0 and NUL, DEL, a C1
 * code point in UTF-8), or -1. The loader refuses them in every YAML string; names and
 * paths that come another way (the console) are held to the same rule.
 */
long pf_ctl_char_at(const char *s, size_t len);

/** Value of @p key in mapping @p map, or NULL. */
const struct pf_node *pf_map_get(const struct pf_node *map, const char *key);

/** Record an error located at node @p n. Returns -EINVAL. */
int pf_node_err(struct pf_errs *errs, const struct pf_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Every key of @p map must be in the NULL-terminated @p allowed list. */
int pf_map_check_keys(const struct pf_node *map, const char *path, const char *const *allowed,
		      struct pf_errs *errs);
/** @p n must be a mapping (or a sequence / a scalar for the variants below). */
int pf_node_expect(const struct pf_node *n, enum pf_node_kind kind, const char *path,
		   struct pf_errs *errs);

/* Typed scalar readers. @p path names the value in messages. */
int pf_node_u64(const struct pf_node *n, const char *path, uint64_t min, uint64_t max,
		uint64_t *out, struct pf_errs *errs);
int pf_node_u32(const struct pf_node *n, const char *path, uint32_t min, uint32_t max,
		uint32_t *out, struct pf_errs *errs);
int pf_node_bool(const struct pf_node *n, const char *path, bool *out, struct pf_errs *errs);
int pf_node_str(const struct pf_node *n, const char *path, const char **out,
		struct pf_errs *errs);
/** Parse "aa:bb:cc:dd:ee:ff" into 6 bytes. */
int pf_node_mac(const struct pf_node *n, const char *path, uint8_t mac[6], struct pf_errs *errs);
/** Parse "a.b.c.d/len" (host order); @p strict refuses host bits set. */
int pf_node_ipv4_prefix(const struct pf_node *n, const char *path, bool strict, uint32_t *addr,
			uint8_t *len, struct pf_errs *errs);
/** Parse "addr/len" (IPv6, network order); @p strict refuses host bits set. */
int pf_node_ipv6_prefix(const struct pf_node *n, const char *path, bool strict, uint8_t addr[16],
			uint8_t *len, struct pf_errs *errs);
/** Match a scalar against a NULL-terminated list of words; returns its index. */
int pf_node_enum(const struct pf_node *n, const char *path, const char *const *words, int *out,
		 struct pf_errs *errs);

/* Helpers shared by the table-file parsers (routes, ACL rules, static MACs). */
bool pf_parse_mac(const char *s, uint8_t mac[6]);
bool pf_parse_ipv4(const char *s, uint32_t *addr);
bool pf_parse_u64(const char *s, uint64_t *out);
/** Parse "addr/len" (IPv6); NULL on success, else why not ("is not an IPv6 address", ...). */
const char *pf_parse_ipv6_prefix(const char *s, bool strict, uint8_t addr[16], uint8_t *len);

/** Resolve @p rel against the directory of @p base_file (absolute paths kept). */
void pf_conf_resolve_path(const char *base_file, const char *rel, char *out, size_t len);

#endif /* PF_CONF_H */
