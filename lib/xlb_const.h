#ifndef XLB_CONST_H
#define XLB_CONST_H

#include <stdint.h>

/*
 * xlb builds with -Wcast-qual and -Wwrite-strings: a string literal is const, and a cast that
 * drops const is a warning. Two ways to meet C libraries that are not const-correct:
 *
 * XLB_STR("text") is a writable copy of a string literal (a compound literal char array), for
 * the char * fields of structures whose strings are owned elsewhere -- a parsed configuration
 * built by hand in a test, a protobuf-c message about to be packed. It lives as long as the
 * enclosing block (the whole program at file scope); nothing that outlives the block may keep
 * it.
 *
 * XLB_UNCONST(p) hands read-only data to an API that declares a non-const pointer but only
 * reads through it: nghttp2's nghttp2_nv name and value, protobuf-c message fields that are
 * only packed, cJSON's valuestring of a node only read. Each use names that API; anything
 * else should be made const-correct instead.
 */
#define XLB_STR(s) ((char[]){s})

#define XLB_UNCONST(p) ((void *)(uintptr_t)(const void *)(p))

#endif
