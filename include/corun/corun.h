/*
 * corun/corun.h — the whole public API of libcorun. Include this, or the
 * header of the one box you use.
 */
#ifndef CORUN_H
#define CORUN_H

#include <corun/common.h>
#include <corun/topo.h>
#include <corun/sense.h>
#include <corun/model.h>
#include <corun/act.h>
#include <corun/policy.h>
#include <corun/platform.h>
#include <corun/thp.h>
#include <corun/wait.h>
#include <corun/procsel.h>
#include <corun/ctl.h>
#include <corun/daemon.h>
#include <corun/profile.h>
#include <corun/engine.h>

#endif
