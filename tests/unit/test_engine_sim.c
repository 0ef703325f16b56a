/*
 * test_engine_sim.c — the engine driving the simulator
 * (corun_sim_run_policy()), for what only a whole crowded machine shows:
 * the outcome check's verdict where no task ever runs alone.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corun/engine.h"
#include "corun/policy.h"
#include "corun/sim.h"

struct ev_count {
    unsigned moves, undos;
    /* when the first plan moved tasks, when the next change did (HUGE_VAL
     * until then), and when a change was first taken back (HUGE_VAL none) */
    double first, second, undo;
};

static void count_event(void *ctx, double t_s, const struct corun_engine_event *ev)
{
    struct ev_count *c = ctx;

    if (ev->kind == CORUN_ENGINE_EV_MOVE) {
        if (!c->moves++)
            c->first = t_s;
        else if (t_s > c->first && t_s < c->second)
            c->second = t_s;
    }
    if (ev->kind == CORUN_ENGINE_EV_UNDO && !c->undos++)
        c->undo = t_s;
}

/*
 * Twelve cores of four threads, each with its own L3 (POWER10 in SMT4
 * mode, bench/heldout10/), and 32 tasks of bench/policies' adversarial mix
 * (streaming, rabbit, chasing and compute-bound in turn): at least two a
 * core, every rate seen a crowded one. corun's first plan crowds the
 * streamers, each of which loses more than half of its rate, and frees
 * the compute-bound tasks, each of which gains three quarters: in STP a
 * gain (14.30 against the kernel's 13.47 held steady). Judged by each
 * task's best rate seen, which is about its rate before, every relative
 * change counted alike and the plan was taken back in its first interval;
 * weighed by the predicted speeds it is kept, and the run ends well above
 * the kernel's placement left alone. Later changes may be taken back, and
 * should be when they lose: from the second plan on, the predictor charges
 * crowded streamers' memory load at their crowded speed, and a change at
 * 2.0 s (steady STP 14.76 -> 14.56 in the simulator) is taken back at
 * 2.5 s (14.76 again).
 */
static void test_check_on_crowded_cores(void **state)
{
    static const int adv[] = {CORUN_SIM_STREAMING, CORUN_SIM_RABBIT, CORUN_SIM_CHASING,
                              CORUN_SIM_COMPUTE_INT};
    struct corun_topo *t =
        synthetic_topo("pack:1 [numa] l3:12(size=8388608) l2:1(size=2097152) core:1 pu:4");
    struct corun_sim_task tk[32];
    struct corun_sim_machine m;
    struct ev_count c = {.second = HUGE_VAL, .undo = HUGE_VAL};
    struct corun_sim_run_opts o = {
        .duration_s = 10, .seed = 1, .on_event = count_event, .event_ctx = &c};
    struct corun_sim_result r;
    double corun, linux_;

    (void)state;
    memset(tk, 0, sizeof(tk));
    for (unsigned i = 0; i < 32; i++) {
        tk[i].cls = adv[i % 4];
        tk[i].nphases = 1;
        assert_int_equal(corun_sim_class_preset(adv[i % 4], &tk[i].phase[0]), 0);
        snprintf(tk[i].name, sizeof(tk[i].name), "t%u", i);
    }
    corun_sim_machine_defaults(t, &m);
    assert_int_equal(corun_sim_run_policy(t, &m, tk, 32, corun_policy_find("corun"), &o, &r), 0);
    corun = r.stp;
    print_message("corun: STP %.3f, %u moves, %u taken back (trials %u, reverted %u)\n", corun,
                  c.moves, c.undos, r.trials, r.reverted);
    assert_true(r.trials >= 1);
    /* the first plan is kept: nothing taken back before the next change */
    assert_true(c.moves > 0);
    if (!(c.undo > c.second))
        fail_msg("the first plan (%.2f s) was taken back at %.2f s", c.first, c.undo);
    corun_sim_result_release(&r);
    o.on_event = NULL;
    assert_int_equal(corun_sim_run_policy(t, &m, tk, 32, corun_policy_find("linux"), &o, &r), 0);
    linux_ = r.stp;
    corun_sim_result_release(&r);
    print_message("linux: STP %.3f\n", linux_);
    assert_true(corun > 1.03 * linux_);
    corun_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_on_crowded_cores),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
