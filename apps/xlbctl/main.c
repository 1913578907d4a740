/* xlbctl: the operator's client for xlbd's control socket. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "command_help.h"
#include "render.h"

#define XLBCTL_DEFAULT_SOCKET "/run/xlb/xlbd.sock"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: xlbctl [--socket PATH] [--json] COMMAND [ARGS...]\n"
        "  --socket PATH  xlbd's control socket (default $XLB_SOCKET or %s)\n"
        "  --json         print the daemon's JSON result instead of tables\n"
        "commands (\"xlbctl help [COMMAND]\" needs no daemon):\n"
        "  status         version, uptime, snapshot generation, workers, ports, VIPs\n"
        "  counters       packet counters per worker and in total, drops by reason\n"
        "  neighbours     gateways and neighbours: resolution state and MAC\n"
        "  xds            xDS server, stream state, ACK/NACK per type, NACK history\n"
        "  clusters       clusters the VIPs reach: type, policy, state, endpoint counts\n"
        "  endpoints CLUSTER  a cluster's endpoints by priority and locality\n"
        "  flows [--vip ADDR[:PORT]] [--endpoint ADDR[:PORT]] [--limit N]\n"
        "                 the workers' NAT flows; \"flows flush --endpoint E\" ends a backend's\n"
        "  tcp [--limit N]  the TCP endpoint's connections, like ss -ti\n"
        "  simulate --vip ADDR:PORT [--path P] [--authority A] [--header K=V]...\n"
        "           [--cookie NAME=VALUE] [--n N] [--seed S] [--connection-id C] [--json]\n"
        "                 N picks on the live snapshot: endpoint histogram, one pick's trace\n"
        "  config dump    every xDS resource with its state, as proto3 JSON with --json\n"
        "  metrics        all counters and state in Prometheus text format\n"
        "  log [level COMPONENT LEVEL]\n"
        "                 log levels per component, or set one (\"all\": every component)\n"
        "  help [COMMAND] the commands, or one command's usage\n",
        XLBCTL_DEFAULT_SOCKET);
}

/* "simulate --vip A:P [--path P] ... [--json]" -> args; false on a bad argument. */
static bool simulate_args(cJSON *args, int argc, char **argv, bool *json)
{
    static const char *const strings[] = {"vip", "path", "authority", "cookie"};
    static const char *const numbers[] = {"n", "seed", "connection-id"};
    cJSON *headers = cJSON_AddArrayToObject(args, "headers");
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--json") == 0) {
            *json = true;
            continue;
        }
        if (strncmp(flag, "--", 2) != 0 || i + 1 >= argc) {
            fprintf(stderr, "xlbctl: simulate: unexpected \"%s\" (see xlbctl help simulate)\n",
                    flag);
            return false;
        }
        const char *name = flag + 2, *value = argv[++i];
        bool known = false;
        for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++)
            if (strcmp(name, strings[k]) == 0) {
                cJSON_AddStringToObject(args, name, value);
                known = true;
            }
        for (size_t k = 0; k < sizeof(numbers) / sizeof(numbers[0]); k++)
            if (strcmp(name, numbers[k]) == 0) {
                char *end;
                double v = strtod(value, &end);
                if (*end != '\0' || end == value) {
                    fprintf(stderr, "xlbctl: simulate: --%s needs a number\n", name);
                    return false;
                }
                cJSON_AddNumberToObject(
                    args, strcmp(name, "connection-id") == 0 ? "connection_id" : name, v);
                known = true;
            }
        if (strcmp(name, "header") == 0) {
            cJSON_AddItemToArray(headers, cJSON_CreateString(value));
            known = true;
        }
        if (!known) {
            fprintf(stderr, "xlbctl: simulate: unknown option %s\n", flag);
            return false;
        }
    }
    return true;
}

/* "flows [flush] [--vip A] [--endpoint E] [--limit N]" -> command name and args. */
static bool flows_args(cJSON *request, cJSON *args, int argc, char **argv)
{
    int i = 0;
    if (argc > 0 && strcmp(argv[0], "flush") == 0) {
        cJSON_ReplaceItemInObject(request, "command", cJSON_CreateString("flows_flush"));
        i = 1;
    }
    for (; i < argc; i += 2) {
        const char *flag = argv[i];
        if (i + 1 >= argc || (strcmp(flag, "--vip") != 0 && strcmp(flag, "--endpoint") != 0 &&
                              strcmp(flag, "--limit") != 0)) {
            fprintf(stderr, "xlbctl: flows: unexpected \"%s\" (see xlbctl help flows)\n", flag);
            return false;
        }
        if (strcmp(flag, "--limit") == 0)
            cJSON_AddNumberToObject(args, "limit", strtod(argv[i + 1], NULL));
        else
            cJSON_AddStringToObject(args, flag + 2, argv[i + 1]);
    }
    return true;
}

/* "tcp [--limit N]" -> args; false on a bad argument. */
static bool tcp_args(cJSON *args, int argc, char **argv)
{
    for (int i = 0; i < argc; i += 2) {
        char *end = NULL;
        double limit = i + 1 < argc ? strtod(argv[i + 1], &end) : 0;
        if (strcmp(argv[i], "--limit") != 0 || end == argv[i + 1] || *end != '\0') {
            fprintf(stderr, "xlbctl: tcp: unexpected \"%s\" (see xlbctl help tcp)\n", argv[i]);
            return false;
        }
        cJSON_AddNumberToObject(args, "limit", limit);
    }
    return true;
}

/* The request for COMMAND ARGS: "log [level COMPONENT LEVEL]", "simulate ...",
 * "flows ...", "tcp ...", the rest bare. */
static cJSON *build_request(const char *command, int argc, char **argv, bool *json)
{
    cJSON *request = cJSON_CreateObject();
    cJSON_AddStringToObject(request, "command", command);
    if (strcmp(command, "flows") == 0) {
        cJSON *args = cJSON_AddObjectToObject(request, "args");
        if (!flows_args(request, args, argc, argv)) {
            cJSON_Delete(request);
            return NULL;
        }
    } else if (strcmp(command, "tcp") == 0) {
        cJSON *args = cJSON_AddObjectToObject(request, "args");
        if (!tcp_args(args, argc, argv)) {
            cJSON_Delete(request);
            return NULL;
        }
    } else if (strcmp(command, "simulate") == 0) {
        cJSON *args = cJSON_AddObjectToObject(request, "args");
        if (!simulate_args(args, argc, argv, json)) {
            cJSON_Delete(request);
            return NULL;
        }
    } else if (strcmp(command, "endpoints") == 0 && argc == 1) {
        cJSON *args = cJSON_AddObjectToObject(request, "args");
        cJSON_AddStringToObject(args, "cluster", argv[0]);
    } else if (strcmp(command, "config") == 0 && argc == 1 && strcmp(argv[0], "dump") == 0) {
        cJSON_ReplaceItemInObject(request, "command", cJSON_CreateString("config_dump"));
    } else if (strcmp(command, "log") == 0 && argc == 3 && strcmp(argv[0], "level") == 0) {
        cJSON *args = cJSON_AddObjectToObject(request, "args");
        cJSON_AddStringToObject(args, "component", argv[1]);
        cJSON_AddStringToObject(args, "level", argv[2]);
    } else if (argc > 0) {
        fprintf(stderr, "xlbctl: unexpected arguments for %s (see xlbctl help %s)\n", command,
                command);
        cJSON_Delete(request);
        return NULL;
    }
    return request;
}

/* The entry of "help WORDS": the words joined by "_" ("flows flush" -> flows_flush), or the
 * one command that a single word starts ("config" -> config_dump). */
static const struct xlb_command_help *help_topic(int argc, char **argv)
{
    char name[64] = "";
    for (int i = 0; i < argc; i++) {
        size_t used = strlen(name);
        snprintf(name + used, sizeof(name) - used, "%s%s", i ? "_" : "", argv[i]);
    }
    const struct xlb_command_help *found = xlb_command_help_find(name);
    size_t len = strlen(name);
    for (const struct xlb_command_help *h = xlb_command_help; !found && argc == 1 && h->name; h++)
        if (strncmp(h->name, name, len) == 0 && h->name[len] == '_')
            found = h;
    return found;
}

static cJSON *help_json(const struct xlb_command_help *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", h->name);
    cJSON_AddStringToObject(o, "usage", h->usage);
    cJSON_AddStringToObject(o, "summary", h->summary);
    return o;
}

/* "help [COMMAND]" from the table the daemon uses too: no socket needed. */
static int local_help(int argc, char **argv, bool json)
{
    cJSON *result;
    if (argc == 0) {
        result = cJSON_CreateArray();
        for (const struct xlb_command_help *h = xlb_command_help; h->name != NULL; h++)
            cJSON_AddItemToArray(result, help_json(h));
    } else {
        const struct xlb_command_help *h = help_topic(argc, argv);
        if (h == NULL) {
            fprintf(stderr, "xlbctl: no command \"%s\" (see xlbctl help)\n", argv[0]);
            return 1;
        }
        result = help_json(h);
    }
    if (json) {
        char *text = cJSON_Print(result);
        printf("%s\n", text ? text : "null");
        cJSON_free(text);
    } else {
        xlbctl_render("help", result, stdout);
    }
    cJSON_Delete(result);
    return 0;
}

/* "--json" after the command (xlbctl config dump --json) means what it means before it: taken
 * out of the command's arguments from index first on. Returns the new argc. */
static int take_json_flags(int argc, char **argv, int first, bool *json)
{
    int kept = first;
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            *json = true;
        else
            argv[kept++] = argv[i];
    }
    return kept;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"socket", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *socket_path = getenv("XLB_SOCKET");
    bool json = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "+s:jh", options, NULL)) != -1) {
        switch (opt) {
        case 's':
            socket_path = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    argc = take_json_flags(argc, argv, optind + 1, &json);
    if (strcmp(argv[optind], "help") == 0)
        return local_help(argc - optind - 1, argv + optind + 1, json);
    if (socket_path == NULL || socket_path[0] == '\0')
        socket_path = XLBCTL_DEFAULT_SOCKET;
    const char *command = /* for rendering */
        strcmp(argv[optind], "config") == 0 ? "config_dump"
        : strcmp(argv[optind], "flows") == 0 && optind + 1 < argc &&
                strcmp(argv[optind + 1], "flush") == 0
            ? "flows_flush"
            : argv[optind];
    cJSON *request = build_request(argv[optind], argc - optind - 1, argv + optind + 1, &json);
    if (request == NULL)
        return 2;

    cJSON *reply = NULL;
    char error[512];
    int rc = xlbctl_request(socket_path, request, &reply, error, sizeof(error));
    cJSON_Delete(request);
    if (rc != 0) {
        fprintf(stderr, "xlbctl: %s\n", error);
        return 2;
    }
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(reply, "ok");
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(reply, "result");
    if (!cJSON_IsTrue(ok)) {
        const cJSON *message = cJSON_GetObjectItemCaseSensitive(reply, "error");
        fprintf(stderr, "xlbctl: %s\n",
                cJSON_IsString(message) ? message->valuestring : "request failed");
        cJSON_Delete(reply);
        return 1;
    }
    if (json) {
        char *text = cJSON_Print(result);
        printf("%s\n", text ? text : "null");
        cJSON_free(text);
    } else {
        xlbctl_render(command, result, stdout);
    }
    cJSON_Delete(reply);
    return 0;
}
