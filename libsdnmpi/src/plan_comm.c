/* plan_comm.c -- the library's own communicator and the plans' private ones (plan_comm.h). */
#include "plan_comm.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "env.h"

#include "log.h"
#include "state.h"
#include "timing.h"

/* The deferred creation (plan_comm.h): its communicator and request until completed; `pending` is
 * 1 from its start until sdnmpi_plan_comm_ready has completed it (read without the lock: the
 * cheap check; written under `wait_lock`). */
static MPI_Comm deferred_comm = MPI_COMM_NULL;
static MPI_Request deferred_req = MPI_REQUEST_NULL;
static atomic_int pending;
static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;

/* libworld = made if the creation (rc) succeeded; else logs and leaves it MPI_COMM_NULL. */
static int adopt(int rc, MPI_Comm made)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    /* Test only (test_libsdnmpi_planahead_kinds.py): SDN_MPI_TEST_NO_LIBCOMM=R, world rank R
     * acts as if the creation had failed on it alone (the plans must then agree to split). */
    if (rc == MPI_SUCCESS && made != MPI_COMM_NULL
        && sdnmpi_env_long("SDN_MPI_TEST_NO_LIBCOMM", -1, -1, INT_MAX) == s->world_rank) {
        (void)PMPI_Comm_free(&made); /* test only: a failure here is the test's to see */
        rc = MPI_ERR_COMM;
    }
    if (rc != MPI_SUCCESS || made == MPI_COMM_NULL) {
        sdnmpi_log("init: the library's communicator could not be made (MPI error %d); plans "
                   "split their communicators", rc);
        return rc != MPI_SUCCESS ? rc : MPI_ERR_COMM;
    }
    s->libworld = made;
    return MPI_SUCCESS;
}

int sdnmpi_plan_comm_init(int deferred)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    MPI_Group world = MPI_GROUP_NULL;
    MPI_Comm made = MPI_COMM_NULL;
    void *ub = NULL;
    int flag = 0;
    double t = sdnmpi_clock();
    s->libworld = MPI_COMM_NULL;
    int rc = PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    s->plan_tag_ub = rc == MPI_SUCCESS && flag && ub != NULL ? *(int *)ub : 32767; /* MPI's least */
    if (deferred) {
        rc = PMPI_Comm_idup(MPI_COMM_WORLD, &deferred_comm, &deferred_req);
        (void)sdnmpi_timing_step(SDNMPI_T_INIT_LIBCOMM, t);
        if (rc != MPI_SUCCESS)
            return adopt(rc, MPI_COMM_NULL);
        atomic_store_explicit(&pending, 1, memory_order_release);
        sdnmpi_log("init: the library's communicator started (deferred: completed where first "
                   "needed)");
        return MPI_SUCCESS;
    }
    if ((rc = PMPI_Comm_group(MPI_COMM_WORLD, &world)) == MPI_SUCCESS)
        rc = PMPI_Comm_create(MPI_COMM_WORLD, world, &made);
    if (world != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&world); /* only a local handle: nothing to do about a failure */
    (void)sdnmpi_timing_step(SDNMPI_T_INIT_LIBCOMM, t);
    return adopt(rc, made);
}

int sdnmpi_plan_comm_ready(void)
{
    if (!atomic_load_explicit(&pending, memory_order_acquire))
        return MPI_SUCCESS;
    if (pthread_mutex_lock(&wait_lock) != 0) {
        sdnmpi_warn("plan_comm: cannot lock the library's communicator");
        return MPI_ERR_OTHER;
    }
    int rc = MPI_SUCCESS;
    if (atomic_load_explicit(&pending, memory_order_acquire)) { /* not completed by another thread */
        double t = sdnmpi_clock();
        rc = PMPI_Wait(&deferred_req, MPI_STATUS_IGNORE);
        MPI_Comm made = deferred_comm;
        deferred_comm = MPI_COMM_NULL;
        rc = adopt(rc, made);
        double waited = sdnmpi_timing_step(SDNMPI_T_LIBCOMM_WAIT, t) - t;
        if (rc == MPI_SUCCESS)
            sdnmpi_log("the library's communicator completed (waited %.1f ms)", waited * 1e3);
        atomic_store_explicit(&pending, 0, memory_order_release);
    }
    (void)pthread_mutex_unlock(&wait_lock);
    return rc;
}

int sdnmpi_plan_comm_pending(void)
{
    return atomic_load_explicit(&pending, memory_order_acquire);
}

void sdnmpi_plan_comm_ready_for(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        (void)sdnmpi_plan_comm_ready(); /* a failure leaves libworld NULL: logged, plans split */
}

int sdnmpi_plan_comm_free(void)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    (void)sdnmpi_plan_comm_ready(); /* a failure: nothing made, nothing to free */
    if (s->libworld == MPI_COMM_NULL)
        return MPI_SUCCESS;
    return PMPI_Comm_free(&s->libworld);
}

int sdnmpi_plan_comm_tag_locked(void)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    int64_t span = (int64_t)s->plan_tag_ub - SDNMPI_PLAN_COMM_TAG0 + 1;
    if (span < 1)
        span = 1;
    /* leaders differ by world rank, a leader's plans by its count: distinct until it wraps */
    int64_t v = s->world_rank + (int64_t)s->world_size * s->plans_led++;
    return SDNMPI_PLAN_COMM_TAG0 + (int)(v % span);
}

/* PMPI_Comm_create_group on libworld of comm's ranks, in the order `order` (NULL: comm's own). */
static int create_on_libworld(MPI_Comm comm, int p, const int *order, int tag, MPI_Comm *priv)
{
    MPI_Group group = MPI_GROUP_NULL, ordered = MPI_GROUP_NULL;
    int rc = PMPI_Comm_group(comm, &group);
    if (rc == MPI_SUCCESS && order != NULL)
        rc = PMPI_Group_incl(group, p, order, &ordered);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_create_group(sdnmpi_g.libworld, order != NULL ? ordered : group, tag, priv);
    if (ordered != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&ordered); /* local handles: nothing to do about a failure */
    if (group != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&group);
    return rc;
}

int sdnmpi_plan_comm_make(MPI_Comm comm, int p, const int *order, int tag, MPI_Comm *priv,
                          int *shared)
{
    *priv = MPI_COMM_NULL;
    *shared = 0;
    if (comm == MPI_COMM_WORLD && order == NULL) {
        *priv = sdnmpi_g.libworld;
        *shared = 1;
        return MPI_SUCCESS;
    }
    return create_on_libworld(comm, p, order, tag, priv);
}

int sdnmpi_plan_comm_own(MPI_Comm comm, int tag, MPI_Comm *priv)
{
    *priv = MPI_COMM_NULL;
    return create_on_libworld(comm, 0, NULL, tag, priv);
}

int sdnmpi_plan_comm_covers(MPI_Comm comm, int *covers)
{
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL, outside = MPI_GROUP_NULL;
    int n = 0, rc = MPI_SUCCESS;
    *covers = sdnmpi_g.libworld != MPI_COMM_NULL;
    if (!*covers || comm == MPI_COMM_WORLD)
        return MPI_SUCCESS;
    if ((rc = PMPI_Comm_group(comm, &group)) == MPI_SUCCESS
        && (rc = PMPI_Comm_group(MPI_COMM_WORLD, &world)) == MPI_SUCCESS
        && (rc = PMPI_Group_difference(group, world, &outside)) == MPI_SUCCESS)
        rc = PMPI_Group_size(outside, &n);
    *covers = rc == MPI_SUCCESS && n == 0;
    if (outside != MPI_GROUP_NULL && outside != MPI_GROUP_EMPTY)
        (void)PMPI_Group_free(&outside); /* local handles: nothing to do about a failure */
    if (world != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&world);
    if (group != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&group);
    return rc;
}
