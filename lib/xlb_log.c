#include "xlb_log.h"

#include <string.h>

#define XLB_LOGTYPE_REGISTER(id, name) RTE_LOG_REGISTER(xlb_logtype_##id, name, INFO);
XLB_LOG_COMPONENTS(XLB_LOGTYPE_REGISTER)
#undef XLB_LOGTYPE_REGISTER

int xlb_log_type_by_component(const char *component)
{
#define XLB_LOGTYPE_MATCH(id, name)                                                                \
    if (strcmp(component, RTE_STR(name)) == 0 || strcmp(component, &RTE_STR(name)[4]) == 0)        \
        return xlb_logtype_##id;
    XLB_LOG_COMPONENTS(XLB_LOGTYPE_MATCH)
#undef XLB_LOGTYPE_MATCH
    return -1;
}
