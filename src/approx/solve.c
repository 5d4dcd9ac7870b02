/* One TAO solve: the least-squares fit of one head with m atoms from one start, on
 * PETSC_COMM_SELF. The residual with its analytic Jacobian serves the least-squares
 * types (TAOBRGN, the default, and TAOPOUNDERS); the objective 0.5 |r|^2 with its
 * gradient J^T r and the Gauss-Newton Hessian J^T J serve every other type, so the
 * options database can choose freely (-tao_type lmvm, nls, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <petsctao.h>

#include "approx/approx_impl.h"

PetscLogEvent hf_approx_ev_sample, hf_approx_ev_warm, hf_approx_ev_solve, hf_approx_ev_resid,
    hf_approx_ev_jac, hf_approx_ev_objgrad, hf_approx_ev_hess, hf_approx_ev_reduce;

/* Defaults; the options database overrides them. A zero residual is the goal whenever
 * an exact head exists, so the gradient tolerance sits near rounding level and the
 * lower bound on 0.5 |r|^2 stops a solve that has found one. */
#define SOLVE_GATOL 1e-15
#define SOLVE_FMIN 1e-32
#define SOLVE_MAX_IT 500
/* BRGN's proximal weight: its default 1e-4 keeps exact fits near 1e-11 RMS; at 1e-10
 * the Gauss-Newton steps are nearly undamped and exact heads come out at 1e-14. */
#define SOLVE_BRGN_WEIGHT 1e-10
/* Relative shift on the Gauss-Newton Hessian's diagonal: the head has d + 1 directions
 * that leave it unchanged (a common key translation, a common bias), so J^T J is
 * singular and a Cholesky preconditioner would meet a zero pivot. */
#define SOLVE_HESS_SHIFT 1e-12

hf_err_t hf_approx_log_register(void)
{
    static int done;
    if (done)
        return HF_OK;
    PetscClassId cls;
    if (PetscClassIdRegister("HfApprox", &cls) ||
        PetscLogEventRegister("HfApproxSample", cls, &hf_approx_ev_sample) ||
        PetscLogEventRegister("HfApproxWarm", cls, &hf_approx_ev_warm) ||
        PetscLogEventRegister("HfApproxSolve", cls, &hf_approx_ev_solve) ||
        PetscLogEventRegister("HfApproxResid", cls, &hf_approx_ev_resid) ||
        PetscLogEventRegister("HfApproxJac", cls, &hf_approx_ev_jac) ||
        PetscLogEventRegister("HfApproxObjGrad", cls, &hf_approx_ev_objgrad) ||
        PetscLogEventRegister("HfApproxHess", cls, &hf_approx_ev_hess) ||
        PetscLogEventRegister("HfApproxReduce", cls, &hf_approx_ev_reduce))
        return hf_error(HF_ERR_INTERNAL, "PETSc: registering the log events failed");
    done = 1;
    return HF_OK;
}

/* What the callbacks need: the sample, a head to unpack parameters into, workspace. */
typedef struct {
    const hf_approx_data_t *s;
    hf_approx_head_t h;
    double *work; /* m + 2 dv */
    double *grad; /* nparams */
    double *jac;  /* residuals x nparams, column-major; only for the Hessian */
    double *rbuf; /* residuals: filled beside a Jacobian and not used */
    long nres, np;
} solve_ctx_t;

static PetscErrorCode ctx_unpack(solve_ctx_t *c, Vec X)
{
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(X, &x));
    hf_approx_head_unpack(&c->h, x);
    PetscCall(VecRestoreArrayRead(X, &x));
    PetscFunctionReturn(0);
}

static PetscErrorCode form_residual(Tao tao, Vec X, Vec R, void *ptr)
{
    solve_ctx_t *c = ptr;
    PetscScalar *r;
    (void)tao;
    PetscFunctionBeginUser;
    PetscCall(PetscLogEventBegin(hf_approx_ev_resid, 0, 0, 0, 0));
    PetscCall(ctx_unpack(c, X));
    PetscCall(VecGetArray(R, &r));
    hf_approx_residual(&c->h, c->s, r, NULL, 0, c->work);
    PetscCall(VecRestoreArray(R, &r));
    PetscCall(PetscLogEventEnd(hf_approx_ev_resid, 0, 0, 0, 0));
    PetscFunctionReturn(0);
}

static PetscErrorCode form_jacobian(Tao tao, Vec X, Mat J, Mat Jpre, void *ptr)
{
    solve_ctx_t *c = ptr;
    PetscScalar *a;
    PetscInt lda;
    (void)tao;
    (void)Jpre;
    PetscFunctionBeginUser;
    PetscCall(PetscLogEventBegin(hf_approx_ev_jac, 0, 0, 0, 0));
    PetscCall(ctx_unpack(c, X));
    PetscCall(MatDenseGetLDA(J, &lda));
    PetscCall(MatDenseGetArray(J, &a));
    hf_approx_residual(&c->h, c->s, c->rbuf, a, lda, c->work);
    PetscCall(MatDenseRestoreArray(J, &a));
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
    PetscCall(PetscLogEventEnd(hf_approx_ev_jac, 0, 0, 0, 0));
    PetscFunctionReturn(0);
}

static PetscErrorCode form_objgrad(Tao tao, Vec X, PetscReal *f, Vec G, void *ptr)
{
    solve_ctx_t *c = ptr;
    PetscScalar *g;
    (void)tao;
    PetscFunctionBeginUser;
    PetscCall(PetscLogEventBegin(hf_approx_ev_objgrad, 0, 0, 0, 0));
    PetscCall(ctx_unpack(c, X));
    PetscCall(VecGetArray(G, &g));
    *f = hf_approx_objective(&c->h, c->s, g, c->work);
    PetscCall(VecRestoreArray(G, &g));
    PetscCall(PetscLogEventEnd(hf_approx_ev_objgrad, 0, 0, 0, 0));
    PetscFunctionReturn(0);
}

/* Gauss-Newton Hessian J^T J (the second-order term of the residual is left out: it
 * vanishes where the fit is exact, and J^T J is positive semidefinite). */
static PetscErrorCode form_hessian(Tao tao, Vec X, Mat H, Mat Hpre, void *ptr)
{
    solve_ctx_t *c = ptr;
    PetscScalar *a;
    PetscInt lda;
    long nr = c->nres, np = c->np;
    (void)tao;
    PetscFunctionBeginUser;
    PetscCall(PetscLogEventBegin(hf_approx_ev_hess, 0, 0, 0, 0));
    if (!c->jac) {
        c->jac = hf_malloc((size_t)nr * np * sizeof *c->jac);
        PetscCheck(c->jac, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for the Jacobian");
    }
    PetscCall(ctx_unpack(c, X));
    hf_approx_residual(&c->h, c->s, c->rbuf, c->jac, nr, c->work);
    PetscCall(MatDenseGetLDA(H, &lda));
    PetscCall(MatDenseGetArray(H, &a));
    double dmax = 0;
    for (long i = 0; i < np; i++)
        for (long j = 0; j <= i; j++) {
            const double *ci = c->jac + i * nr, *cj = c->jac + j * nr;
            double s = 0;
            for (long k = 0; k < nr; k++)
                s += ci[k] * cj[k];
            a[i + j * lda] = s;
            a[j + i * lda] = s;
            if (i == j && s > dmax)
                dmax = s;
        }
    for (long i = 0; i < np; i++)
        a[i + i * lda] += SOLVE_HESS_SHIFT * (1 + dmax);
    PetscCall(MatDenseRestoreArray(H, &a));
    PetscCall(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
    if (Hpre != H) {
        PetscCall(MatAssemblyBegin(Hpre, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(Hpre, MAT_FINAL_ASSEMBLY));
    }
    PetscCall(PetscLogEventEnd(hf_approx_ev_hess, 0, 0, 0, 0));
    PetscFunctionReturn(0);
}

/* A PETSc failure as an hf error with PETSc's own message: an unknown type or a bad
 * option value named on the command line is bad input, anything else is internal. */
static hf_err_t petsc_fail(PetscErrorCode pe, const char *what)
{
    const char *text = NULL;
    char *specific = NULL;
    PetscErrorMessage((int)pe, &text, &specific);
    const char *msg = specific && specific[0] ? specific : text ? text : "";
    if (pe == PETSC_ERR_ARG_UNKNOWN_TYPE || pe == PETSC_ERR_ARG_OUTOFRANGE ||
        pe == PETSC_ERR_ARG_WRONG || pe == PETSC_ERR_ARG_INCOMP)
        return hf_error(HF_ERR_INPUT, "PETSc options: %s (check the -tao_* options)", msg);
    return hf_error(HF_ERR_INTERNAL, "PETSc: %s failed: %s (error %d)", what, msg, (int)pe);
}

#define PCALL(expr)                                                                                \
    do {                                                                                           \
        PetscErrorCode pe_ = (expr);                                                               \
        if (pe_) {                                                                                 \
            err = petsc_fail(pe_, #expr);                                                          \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

hf_err_t hf_approx_solve(const hf_approx_data_t *train, hf_approx_head_t *h,
                         hf_approx_solve_info_t *info)
{
    hf_err_t err = HF_OK;
    Vec x = NULL, r = NULL;
    Mat J = NULL, H = NULL;
    Tao tao = NULL;
    solve_ctx_t c;
    hf_approx_head_t start;
    PetscScalar *xa;
    int event = 0;
    memset(&c, 0, sizeof c);
    hf_approx_head_init_empty(&start);
    memset(info, 0, sizeof *info);
    double t0 = MPI_Wtime();

    HF_CHECK(err, hf_approx_log_register(), done);
    PCALL(PetscLogEventBegin(hf_approx_ev_solve, 0, 0, 0, 0));
    event = 1;
    c.s = train;
    c.nres = train->n * train->dv;
    c.np = hf_approx_nparams(h->m, h->d, h->dv);
    HF_CHECK(err, hf_approx_head_copy(&c.h, h), done);
    HF_CHECK(err, hf_approx_head_copy(&start, h), done);
    double start_mse;
    HF_CHECK(err, hf_approx_mse(h, train, &start_mse), done);
    c.work = hf_malloc((size_t)(h->m + 2 * h->dv) * sizeof *c.work);
    c.rbuf = hf_malloc((size_t)c.nres * sizeof *c.rbuf);
    if (!c.work || !c.rbuf) {
        err = HF_ERR_NOMEM;
        goto done;
    }

    PCALL(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)c.np, &x));
    PCALL(VecGetArray(x, &xa));
    hf_approx_head_pack(h, xa);
    PCALL(VecRestoreArray(x, &xa));
    PCALL(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)c.nres, &r));
    PCALL(MatCreateSeqDense(PETSC_COMM_SELF, (PetscInt)c.nres, (PetscInt)c.np, NULL, &J));
    PCALL(MatCreateSeqDense(PETSC_COMM_SELF, (PetscInt)c.np, (PetscInt)c.np, NULL, &H));

    PCALL(TaoCreate(PETSC_COMM_SELF, &tao));
    PCALL(TaoSetType(tao, TAOBRGN));
    PCALL(TaoSetSolution(tao, x));
    PCALL(TaoSetResidualRoutine(tao, r, form_residual, &c));
    PCALL(TaoSetJacobianResidualRoutine(tao, J, J, form_jacobian, &c));
    PCALL(TaoSetObjectiveAndGradient(tao, NULL, form_objgrad, &c));
    PCALL(TaoSetHessian(tao, H, H, form_hessian, &c));
    PCALL(TaoSetTolerances(tao, SOLVE_GATOL, 0.0, 0.0));
    PCALL(TaoSetFunctionLowerBound(tao, SOLVE_FMIN));
    PCALL(TaoSetMaximumIterations(tao, SOLVE_MAX_IT));
    {
        /* BRGN passes tolerances down to its subsolver but not the lower bound */
        Tao sub;
        PCALL(TaoBRGNGetSubsolver(tao, &sub));
        PCALL(TaoSetFunctionLowerBound(sub, SOLVE_FMIN));
        PCALL(TaoBRGNSetRegularizerWeight(tao, SOLVE_BRGN_WEIGHT));
    }
    PCALL(TaoSetFromOptions(tao));
    PCALL(TaoSolve(tao));

    TaoConvergedReason reason;
    PetscInt its;
    PCALL(TaoGetConvergedReason(tao, &reason));
    PCALL(TaoGetIterationNumber(tao, &its));
    const PetscScalar *xr;
    PCALL(VecGetArrayRead(x, &xr));
    hf_approx_head_unpack(h, xr);
    PCALL(VecRestoreArrayRead(x, &xr));
    info->iterations = its;
    info->reason = (int)reason;
    snprintf(info->reason_name, sizeof info->reason_name, "%s", hf_approx_reason_name(reason));
    /* the reported error is recomputed from the head, whatever the solver's objective */
    HF_CHECK(err, hf_approx_mse(h, train, &info->train_mse), done);
    if (isnan(info->train_mse))
        info->train_mse = INFINITY;
    /* a solve never hands back a head worse than its start (BRGN's first step is
     * pulled towards the origin, and at rounding level steps are noise) */
    if (start_mse < info->train_mse) {
        hf_approx_head_clear(h);
        *h = start;
        hf_approx_head_init_empty(&start); /* moved into h */
        info->train_mse = start_mse;
    }

done:
    TaoDestroy(&tao);
    MatDestroy(&H);
    MatDestroy(&J);
    VecDestroy(&r);
    VecDestroy(&x);
    free(c.jac);
    free(c.rbuf);
    free(c.work);
    hf_approx_head_clear(&c.h);
    hf_approx_head_clear(&start);
    if (event)
        PetscLogEventEnd(hf_approx_ev_solve, 0, 0, 0, 0);
    info->seconds = MPI_Wtime() - t0;
    return err;
}

hf_err_t hf_approx_tao_type(char *buf, size_t n)
{
    hf_err_t err = HF_OK;
    Tao tao = NULL;
    TaoType type;
    char want[64];
    PetscBool set = PETSC_FALSE;
    PCALL(TaoCreate(PETSC_COMM_SELF, &tao));
    PCALL(TaoSetType(tao, TAOBRGN));
    /* an unknown -tao_type fails here, before TaoSetFromOptions (which would leak its
     * options block on that error path) */
    PCALL(PetscOptionsGetString(NULL, NULL, "-tao_type", want, sizeof want, &set));
    if (set)
        PCALL(TaoSetType(tao, want));
    PCALL(TaoSetFromOptions(tao));
    PCALL(TaoGetType(tao, &type));
    snprintf(buf, n, "%s", type);
done:
    TaoDestroy(&tao);
    return err;
}

const char *hf_approx_reason_name(int reason)
{
    /* TaoConvergedReasons is indexed from the most negative reason (it points into
     * its table); stay inside the documented range */
    if (reason < TAO_DIVERGED_USER || reason > TAO_CONVERGED_USER)
        return "UNKNOWN";
    return TaoConvergedReasons[reason];
}
