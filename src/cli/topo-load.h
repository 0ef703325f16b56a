/*
 * topo-load.h — loading the topology a subcommand was pointed at, with the
 * one-line error every front end prints for bad input.
 */
#ifndef CORUN_CLI_TOPO_LOAD_H
#define CORUN_CLI_TOPO_LOAD_H

#include "corun/topo.h"

/*
 * Loads this system's topology, or the XML file @xml, or the synthetic
 * description @synthetic (at most one of the two given). On failure prints
 * "corun CMD: INPUT: reason" and returns 2 for bad input (1 for a failure of
 * this system); 0 on success.
 */
int cli_topo_load(const char *cmd, const char *xml, const char *synthetic,
                  struct corun_topo **out);

#endif
