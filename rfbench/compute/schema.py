"""The result schema, declared once (docs/architecture.md#result-schema): the columns every row has,
the parameter columns and their kinds, the columns derived from a row's own measurement, and every
metric name with the quantity it measures. One name, one quantity, forever.

Built-in experiments write only names declared here (a row with an unknown metric is refused when
its file is written); a plugin adds its own with :func:`rfbench.compute.results.register_metric` and
:func:`~rfbench.compute.results.register_parameter`. Readers take each file's own declaration of its
column kinds first (:func:`rfbench.compute.results.column_kinds`), so reading never depends on which
modules happen to be imported.
"""

STRING, FLOAT, INT, BOOL = "string", "float", "int", "bool"

#: Columns every result row has: name -> kind.
REQUIRED_COLUMNS: dict[str, str] = {
    "experiment": STRING,
    "figure": STRING,
    "estimator": STRING,
    "kernel": STRING,
    "metric": STRING,
    "value": FLOAT,
    "stderr": FLOAT,
    "n_trials": INT,
}
#: Required columns that may hold nulls (``figure`` may be empty but not null).
NULLABLE_REQUIRED = frozenset({"stderr"})

#: Parameter columns (named as the CLI options) -> kind; null where not applicable.
PARAMETER_COLUMNS: dict[str, str] = {
    # every experiment
    "d": INT,
    # the projections of the row's estimator (a hybrid's: per base estimator)
    "m": INT,
    # two budgets, two names: `budget` is a feature budget F (attention: m = ⌊F/l⌋ projections,
    # classify: m = ⌈F/l⌉);
    # `projection_budget` the projection budget M a hybrid's row of cost, pointwise and precision
    # was sized from (m = M // n; null where m is the budget)
    "budget": INT,
    "projection_budget": INT,
    "n": INT,
    "r": FLOAT,
    "theta": FLOAT,
    "sigma": FLOAT,
    "alpha": FLOAT,
    "dataset": STRING,
    "regime": STRING,
    "weights": STRING,
    "note": STRING,
    "rep": INT,
    # whether the sample resolves this empirical statistic
    # (rfbench.compute.features.theory.resolution); null: not assessed; a file without the column:
    # every row resolved
    "resolved": BOOL,
    # every run: the real feature count of a row (m × features per projection)
    "features": INT,
    # attention
    "causal": BOOL,
    "fit_text": STRING,
    "text": STRING,
    "layer": INT,
    "head": INT,
    # a grouped-query model's key/value head: the one the row's query head reads (query head h,
    # key/value head h // group), whose key-side map it shares
    "kv_head": INT,
    "tokens": INT,
    "rank": INT,
    "window": INT,
    "top_k": INT,
    "reference": STRING,
    "kind": STRING,
    "bound": BOOL,
    "sentences": INT,
    "z_uniform": FLOAT,
    "beats_uniform": BOOL,
    # lm (a causal language model after the swap)
    "sinks": INT,
    "sequences": INT,
    # classify
    "stream": STRING,
    "stream_seed": INT,
    "m_per_d": FLOAT,
    "protocol": STRING,
    # where the row's σ came from (docs/experiments.md#classify-sigma)
    "sigma_rule": STRING,
    # the σ the SimRF code uses on the row's data set (null where it gives none)
    "sigma_published": FLOAT,
    # clusters
    "pair": STRING,
    "pair_rank": INT,
    # cost
    "step": STRING,
    "part": STRING,
    "target": FLOAT,
    "points": INT,
    # gram
    "inputs": STRING,
    "n_points": INT,
    "data_seed": INT,
    "projections": INT,
    "input_scale": FLOAT,
    # pointwise
    "pair_index": INT,
    "norm_q": FLOAT,
    "norm_k": FLOAT,
    "variant": STRING,
    # precision
    "dtype": STRING,
    "form": STRING,
    # theory
    "v": FLOAT,
    "w": FLOAT,
    "passes": INT,
    # variance
    "mechanism": STRING,
    # sequential draws (stop = resolved; docs/architecture.md#sequential-draws): why the row's
    # draws stopped (resolved / cap), the anytime-valid confidence sequence of its value at the
    # stopping time, and of the declared comparison with estimator `versus` (versus minus the
    # row's estimator) with its anytime-valid p-value; null in rows drawn with stop = fixed
    "stop": STRING,
    "cs_low": FLOAT,
    "cs_high": FLOAT,
    "versus": STRING,
    "diff_low": FLOAT,
    "diff_high": FLOAT,
    "p_anytime": FLOAT,
    # similarity: the document set, its size and pairs, a random method's draws, and the 95 %
    # bootstrap interval over documents of the row's value
    "data": STRING,
    "documents": INT,
    "pairs": INT,
    "draws": INT,
    "ci_low": FLOAT,
    "ci_high": FLOAT,
}

#: Parameter columns computed from a row's own measurement (a test statistic, a verdict, whether
#: the sample resolves it) or from its estimator: data about the row, not what identifies it
#: (``rfbench compare``).
DERIVED_COLUMNS: set[str] = {
    "resolved",
    "features",
    "z_uniform",
    "beats_uniform",
    "sigma_rule",
    "sigma_published",
    "stop",
    "cs_low",
    "cs_high",
    "diff_low",
    "diff_high",
    "p_anytime",
    "ci_low",
    "ci_high",
}

#: Metric names -> what they measure.
METRICS: dict[str, str] = {
    # every experiment
    "true": "the exact kernel value K",
    "mean": "mean of the estimates K̂",
    "bias": "mean(K̂) - K",
    "mse": "mean (K̂ - K)²",
    "rel_rmse": "√MSE / K",
    "rel_mae": "mean |K̂ - K| / K",
    "q05": "5% quantile of K̂",
    "q50": "median of K̂",
    "q95": "95% quantile of K̂",
    "neg_fraction": "fraction of negative estimates K̂ < 0",
    "skipped": "1: the cell could not be computed; the reason is in column 'note'",
    "theory_mse": "closed-form MSE",
    "theory_rel_rmse": "√(closed-form MSE) / K",
    "frob_sq": "Σ (K - K̂)² over a Gram matrix",
    "rel_frob": "‖K - K̂‖_F / ‖K‖_F",
    "log_rel_var": "log of Var(K̂) / K²",
    "accuracy": "classification accuracy",
    "time_s": "wall time in seconds",
    "cpu_s": "CPU time (process time) in seconds",
    # attention
    "fit_seconds": "CPU seconds (time.process_time) of fitting a learned map to a head",
    "fit_kl": "mean row KL(A_i‖Â_i) of a learned map on its fitting tokens (nats)",
    "out_rel_frob": "‖Ô - O‖_F/‖O‖_F, attention output O = D⁻¹AV, Ô = D̂⁻¹ÂV",
    "out_rel_spec": "‖Ô - O‖₂/‖O‖₂ (spectral norm), attention output",
    "attn_rel_frob": "‖Â - A‖_F/‖A‖_F, A = K row-normalised (attention)",
    "attn_kl": "mean row KL(A_i‖Â_i) over rows where Â_i is a positive distribution",
    "kl_rows": "fraction of rows where Â_i is a positive distribution (attn_kl defined)",
    "bad_normaliser": "fraction of rows whose normaliser D̂_ii is ≤ 0 or not finite",
    "out_rel_frob_diff": "out_rel_frob minus the reference estimator's on the same draws",
    "attn_entropy": "mean row entropy of the exact attention (nats; log S = uniform)",
    "max_logit": "max qᵀk of a head (q, k scaled so qᵀk is the logit)",
    "swap_cosine": "mean cosine of swapped vs exact sentence embeddings",
    "perplexity": "exp(mean next-token loss) of a causal LM on held-out text (lm)",
    "ppl_ratio": "perplexity with the method swapped in / with exact attention (lm)",
    "gap_recovered": "(L_uniform − L)/(L_uniform − L_exact), L a mean next-token loss (lm)",
    "passkey_recall": "fraction of passkey probes whose every answer token is the argmax (lm)",
    "passkey_token_accuracy": "fraction of passkey answer tokens that are the argmax (lm)",
    "swap_spearman": "Spearman correlation of pairwise similarities, swapped vs exact",
    "swap_nonfinite": "fraction of sentences whose swapped embedding is not finite",
    # similarity
    "human_spearman": "Spearman correlation of embedding cosines with mean human similarity "
    "ratings over document pairs",
    "human_spearman_minus_exact": "human_spearman minus exact attention's (paired)",
    "human_spearman_minus_uniform": "human_spearman minus uniform attention's (paired)",
    "human_gap_recovered": "(ρ - ρ_uniform)/(ρ_exact - ρ_uniform) of human_spearman",
    "embedding_nonfinite": "fraction of documents whose swapped embedding is not finite",
    "q_norm_q50": "q50 of the row norms of q (scaled)",
    "q_norm_q95": "q95 of the row norms of q (scaled)",
    "q_norm_max": "max of the row norms of q (scaled)",
    "q_anisotropy": "top eigenvalue / trace of qᵀq",
    "k_norm_q50": "q50 of the row norms of k (scaled)",
    "k_norm_q95": "q95 of the row norms of k (scaled)",
    "k_norm_max": "max of the row norms of k (scaled)",
    "k_anisotropy": "top eigenvalue / trace of kᵀk",
    # classify
    "val_accuracy": "classification accuracy on the validation split (σ tuning)",
    "v_mean": "mean ‖σx* + σx_i‖ over (test, training) pairs (SimRF Table 2 v̄)",
    # clusters
    "mse_mean": "mean over repetitions of a Gram-matrix MSE",
    "mse_min": "minimum over repetitions of a Gram-matrix MSE",
    "mse_max": "maximum over repetitions of a Gram-matrix MSE",
    "cluster_s": "l(A_ij) = ‖A_ij r_i + A_ij⁻¹ r_j‖² of a cluster-centre pair (HRF s)",
    # cost
    "flops": "floating-point operations of a step (rfbench cost FLOP model)",
    "rms_rel_frob": "√(mean over draws of ‖K - K̂‖²_F) / ‖K‖_F",
    "theory_rms_rel_frob": "√(Σ_ij closed-form MSE) / ‖K‖_F",
    "m_needed": "projections M for the target error (MSE ∝ 1/M)",
    "crossover_L": "sequence length above which RF attention needs fewer FLOPs than exact",
    "features_per_point": "real feature entries per point (complex: 2)",
    "fht_cpu": "1 if the structured projection used fht-cpu's SIMD transform, 0 for numpy",
    # gram
    "frob_sq_per_entry": "Σ (K - K̂)² / (N·N'): frob_sq per Gram entry (SimRF /d²)",
    "theory_frob_sq": "closed-form E Σ (K - K̂)² = Σ_ij MSE(x_i, y_j)",
    "theory_frob_sq_per_entry": "closed-form E Σ (K - K̂)² / (N·N')",
    "oracle_frob_sq_per_entry": (
        "bound, not an estimator: Σ (K - K_r)² / (N·N') of the best rank-r K_r, r = the "
        "estimator's feature count (Eckart-Young)"
    ),
    # pointwise
    "diff_mse": "sample MSE minus the reference estimator's (column 'reference'), same (r, θ)",
    "is_mse": "importance-sampled estimate of the MSE E(K̂ - K)²",
    "is_rel_rmse": "√is_mse / K",
    "tail_share": (
        "share of the draws with K̂ > tail·K (parameter tail; binomial standard error): how often "
        "one estimate is a drastic outlier"
    ),
    "max_ratio": "the largest K̂/K over the draws (parameter tail > 0)",
    "samples_needed": (
        "estimates needed to resolve the MSE: >= 30 expected draws where its tail lives "
        "(rfbench.compute.features.theory.resolution)"
    ),
    "samples_needed_mean": (
        "estimates needed to resolve the mean: >= 30 expected draws where its tail lives "
        "(rfbench.compute.features.theory.resolution)"
    ),
    "theory_neg_fraction": "exact P(K̂ < 0) at the angle (closed form, where one exists)",
    "neg_count": "number of negative estimates K̂ < 0 among n_trials (all angles of a curve)",
    # precision
    "nonfinite_fraction": "fraction of estimates K̂ that are inf or NaN",
    "dtype_rel_mae": "mean |K̂_dtype - K̂_float64| / K over the same draws (the dtype's own error)",
    "dtype_to_mc": (
        "mean |K̂_dtype - K̂_float64| / RMSE of K̂_float64 (the dtype's error in units of the MC "
        "error)"
    ),
    "dtype_to_mc_same_form": (
        "mean |K̂_dtype - K̂_float64| / RMSE of the logspace K̂_float64, both in the same form "
        "(the dtype's part of dtype_to_mc; float64 of the form against logspace is the form's "
        "part)"
    ),
    "attn_nonfinite_fraction": "fraction of attention rows D̂⁻¹Â with an inf or NaN weight",
    "attn_tv": "mean total variation ½Σ_j |P̂_ij - P_ij| of finite attention rows vs softmax",
    # qmc
    "mse_std": "standard deviation over repetitions of a repetition's MSE",
    # theory
    "rf_conformity": "RF-conformity ρ of one configuration of vectors (SimRF Eq. 12)",
    "rf_conformity_sd": "sd of ρ over random iid directions of fixed norms (Fig. 4)",
    "theory_rf_conformity": "closed-form E ρ over χ_d norms (SimRF Eqs. 19, 23, 24)",
    "density": "probability density of w_ij = ‖ω_i + ω_j‖ (SimRF Eqs. 18, 20)",
    "conformity_integrand": "0F1(; d/2; v²w²/4), the angular mean of e^{ω_ijᵀv}",
    "mse_ratio": "closed-form MSE_coupling / MSE_iid at ‖x + y‖ = v (SimRF Eq. 11)",
    # variance
    "log_var_over_k": "mean over pairs of log(Var(K̂)/K) (DERF Fig. 2 literal)",
    "log_mean_rel_var": "log of the mean over pairs of Var(K̂)/K²",
    "log_mean_var_over_k": "log of the mean over pairs of Var(K̂)/K",
    "log_rel_var_mc": "Monte Carlo mean over a subsample of pairs of log(MSE/K²)",
    "log_rel_var_mc_theory": "closed-form mean of log(Var/K²) on the MC subsample",
}

#: Metrics where larger is better; every other metric is an error, a cost, a fraction of failures
#: or a description of the data (smaller is better where better applies: the RF-conformity too,
#: which the simplex coupling minimises, SimRF Cor. 3.3).
HIGHER_IS_BETTER = frozenset({
    "accuracy", "val_accuracy", "swap_cosine", "swap_spearman", "passkey_recall",
    "passkey_token_accuracy", "gap_recovered", "human_spearman", "human_spearman_minus_exact",
    "human_spearman_minus_uniform", "human_gap_recovered",
})  # fmt: skip
#: The metrics a chart shows first when present, in this order (the quantity each paper figure
#: plots).
HEADLINE_METRICS = (
    "rel_rmse", "accuracy", "log_rel_var", "rel_frob", "mse", "frob_sq", "theory_rel_rmse",
    "rel_mae", "nonfinite_fraction", "time_s",
)  # fmt: skip


def better(metric: str) -> str:
    """``"higher is better"`` or ``"lower is better"``: the direction of ``metric`` in words."""
    return "higher is better" if metric in HIGHER_IS_BETTER else "lower is better"


#: Metrics that are measured times (machine- and load-dependent): ``rfbench compare`` reports
#: their ratio instead of testing them as numbers.
TIMING_METRICS = frozenset({"time_s", "cpu_s", "fit_seconds"})

#: The variance experiment's headline metric per (power of K in the denominator, reduction over
#: the pairs): DERF Figs. 1-2 and the readings of docs/experiments.md#derf-fig2.
VARIANCE_METRICS: dict[tuple[int, str], str] = {
    (2, "mean"): "log_rel_var",
    (1, "mean"): "log_var_over_k",
    (2, "logmeanexp"): "log_mean_rel_var",
    (1, "logmeanexp"): "log_mean_var_over_k",
}
