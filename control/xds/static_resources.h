/*
 * xlb.static_resources: Listener, RouteConfiguration, Cluster and ClusterLoadAssignment
 * objects in proto3 JSON, read into the same protobuf-c messages xDS delivers and validated
 * by the same functions, then held in the cache as STATIC resources that satisfy watches
 * without a management server.
 */
#ifndef XLB_STATIC_RESOURCES_H
#define XLB_STATIC_RESOURCES_H

#include <cjson/cJSON.h>

#include "json_read.h"
#include "xds_cache.h"

/* Load every static resource into cache. Problems are appended to errs (one line each, the
 * JSON path or the resource named); valid resources are loaded all the same. Returns 0 when
 * every resource was valid, -1 otherwise. static_resources may be NULL. */
int xlb_static_resources_load(struct xlb_xds_cache *cache, const cJSON *static_resources,
                              struct xlb_errors *errs);

#endif
