/*
 * `xlbctl flows`: the workers' NAT flows, read from their tables (lib/xlb_flow_table.h) for
 * display, and `xlbctl flows flush --endpoint ADDR[:PORT]`, which asks every worker to end the
 * flows to a backend.
 */
#ifndef XLB_FLOWS_H
#define XLB_FLOWS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "xlb_shared.h"

/* The most flows one listing returns. */
#define XLB_FLOWS_MAX_LIST 10000

/* args: {"vip": "ADDR[:PORT]", "endpoint": "ADDR[:PORT]", "limit": N}; NULL + error if bad. */
cJSON *xlb_flows_list(const struct xlb_shared *shared, const cJSON *args, char *error, size_t len);

/* args: {"endpoint": "ADDR[:PORT]"}; returns {"workers": n} or NULL + error. */
cJSON *xlb_flows_flush(struct xlb_shared *shared, const cJSON *args, char *error, size_t len);

#endif
