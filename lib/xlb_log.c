#include "xlb_log.h"

#include <string.h>

#define XLB_LOGTYPE_REGISTER(id, name) RTE_LOG_REGISTER(xlb_logtype_##id, name, INFO);
XLB_LOG_COMPONENTS(XLB_LOGTYPE_REGISTER)
#undef XLB_LOGTYPE_REGISTER

const char *xlb_log_component_name(int logtype)
{
#define XLB_LOGTYPE_NAME(id, name)                                                                 \
    if (logtype == xlb_logtype_##id)                                                               \
        return RTE_STR(name);
    XLB_LOG_COMPONENTS(XLB_LOGTYPE_NAME)
#undef XLB_LOGTYPE_NAME
    return "xlb";
}

int xlb_log_type_by_component(const char *component)
{
#define XLB_LOGTYPE_MATCH(id, name)                                                                \
    if (strcmp(component, RTE_STR(name)) == 0 || strcmp(component, &RTE_STR(name)[4]) == 0)        \
        return xlb_logtype_##id;
    XLB_LOG_COMPONENTS(XLB_LOGTYPE_MATCH)
#undef XLB_LOGTYPE_MATCH
    return -1;
}
