#include "xlb_counters.h"

static const char *const drop_names[XLB_DROP_MAX] = {
#define XLB_DROP_NAME(id, name) [XLB_DROP_##id] = name,
    XLB_DROP_REASONS(XLB_DROP_NAME)
#undef XLB_DROP_NAME
};

static const char *const event_names[XLB_EVENT_MAX] = {
#define XLB_EVENT_NAME(id, name) [XLB_EVENT_##id] = name,
    XLB_EVENT_COUNTERS(XLB_EVENT_NAME)
#undef XLB_EVENT_NAME
};

const char *xlb_drop_reason_name(enum xlb_drop_reason reason)
{
    return reason < XLB_DROP_MAX ? drop_names[reason] : "unknown";
}

const char *xlb_event_counter_name(enum xlb_event_counter counter)
{
    return counter < XLB_EVENT_MAX ? event_names[counter] : "unknown";
}
