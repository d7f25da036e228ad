import os
import tempfile

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("COLUMNS", "160")
# the user's own models (~/.tokenomics/models.csv) never leak into a test: an empty home of its own
os.environ["TOKENOMICS_HOME"] = tempfile.mkdtemp(prefix="tokenomics-home-")


import pytest  # noqa: E402


#: Tests in the ``integration`` tier besides those marked in their own files: each took over ~2 s of a
#: 2-core machine (rescoring every published serving run, refitting the forecast per origin, writing
#: the whole report). ``pytest`` (the fast tier) skips them; ``pytest -m integration`` and CI run them.
INTEGRATION = {
    "test_display.py::test_notebook_example_runs",
    "test_examples_sweep.py::test_distributed_sweep_small",
    "test_fit_serving.py::test_a_chip_left_out_does_not_hand_its_engine_the_queueing_collapses",
    "test_fit_serving.py::test_fit_serving_leave_one_out_is_the_library_one",
    "test_fit_serving.py::test_fit_serving_writes_the_fit_of_the_users_rows",
    "test_fit_serving.py::test_shipped_engines_table_is_what_the_fit_produces",
    "test_forecast.py::test_a_part_with_few_matched_observations_is_capped_not_shared",
    "test_forecast.py::test_added_rows_may_name_a_bundled_whole",
    "test_forecast.py::test_backtest_table_columns_and_weights",
    "test_forecast.py::test_backtest_weights_follow_out_of_sample_error",
    "test_forecast.py::test_backtest_coverage_table_by_sample_and_horizon",
    "test_forecast.py::test_backtest_coverage_by_series_votes_each_series_once",
    "test_forecast_benchmarks.py::test_scored_points_carry_the_three_errors",
    "test_forecast_benchmarks.py::test_benchmarks_summarise_the_scored_points",
    "test_display.py::test_plot_watch_metrics",
    "test_display.py::test_watch_tables_carry_datetime64",
    "test_input_files.py::test_process_substitution_through_the_cli",
    "test_outputs_safe.py::test_out_dot_with_force_keeps_other_files_and_says_where",
    "test_outputs_safe.py::test_forecast_out_is_one_directory_swap",
    "test_bad_input.py::test_report_directory_is_swapped_whole_or_not_at_all",
    "test_forecast_cli.py::test_show_infra_takes_a_deployment_file_and_an_execution_plan",
    "test_display.py::test_watch_displays",
    "test_outputs_safe.py::test_out_through_a_symlink_writes_the_target_and_leaves_the_link",
    "test_fit_serving.py::test_ttft_overhead_is_one_value_per_vendor",
    "test_forecast_benchmarks.py::test_cli_backtest_json_is_per_scored_point_and_table_names_drift",
    "test_forecast.py::test_figures_published_after_the_method_freeze_scored_with_the_frozen_method",
    "test_forecast.py::test_jump_off_puts_the_curves_median_on_the_last_observation",
    "test_forecast.py::test_late_openrouter_weeks_scored_with_the_method_fitted_without_them",
    "test_forecast.py::test_ninth_pass_openrouter_figures_scored_with_the_method_fitted_without_them",
    "test_forecast.py::test_perfectly_smooth_history_gets_intervals_that_widen_with_the_horizon",
    "test_forecast.py::test_serve_at_target_is_the_most_requests_that_keep_every_user_at_the_speed",
    "test_forecast_cli.py::test_show_added_scores_added_rows_with_the_method_fitted_without_them",
    "test_forecast_cli.py::test_show_backtest_reports_coverage_and_width_by_horizon",
    "test_forecast_cli.py::test_show_infra_says_which_series_are_counted_inside_others",
    "test_forecast_cli.py::test_show_replay_tabulates_the_month_end_replay",
    "test_forecast_cli.py::test_table_caption_lists_each_set_of_weights_once",
    "test_forecast_cli.py::test_table_output_and_out_dir",
    "test_kernel_versions.py::test_blind_2026_rows_release_correction_helps_tensorrt_llm",
    "test_mlperf.py::test_cli_validate_serving_mlperf_json",
    "test_mlperf.py::test_every_row_is_predicted",
    "test_mlperf.py::test_server_set_is_predicted_and_scores_tpot",
    "test_package.py::test_python_dash_m_runs",
    "test_regime.py::test_calibrate_says_which_parameters_its_cases_left_at_the_default",
    "test_regime.py::test_cli_holdout_regime_json",
    "test_regime.py::test_cli_holdout_table_and_model",
    "test_regime.py::test_kv_read_curve_fits_kernels_and_agrees_with_the_calibration",
    "test_regime.py::test_unconstrained_parameter_stays_at_its_start_whatever_the_float_noise",
    "test_report.py::test_example_runs",
    "test_report.py::test_report_library_skips_what_does_not_fit",
    "test_report.py::test_report_prices_a_named_deployment",
    "test_report.py::test_report_warns_on_stderr_about_skipped_configurations",
    "test_report.py::test_report_writes_markdown_html_and_pngs",
    "test_serving_disagg.py::test_every_holdout_row_predicts",
    "test_serving_model.py::test_decode_rows_without_lengths_report_no_total",
    "test_serving_model.py::test_every_holdout_row_is_predicted",
    "test_serving_model.py::test_measured_concurrency_is_littles_law_on_the_published_figures",
    "test_serving_ttft.py::test_held_out_ttft_accuracy",
    "test_trtllm_perf.py::test_every_row_is_predicted_through_the_cli",
    "test_watch_cli.py::test_cli_csv_is_the_frame",
    "test_watch_cli.py::test_cli_json_is_the_frame",
    "test_watch_cli.py::test_cli_table_and_out",
    "test_watch_cli.py::test_dashboard_write",
    "test_watch_cli.py::test_example_runs",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if f"{item.path.name}::{item.originalname}" in INTEGRATION:
            item.add_marker(pytest.mark.integration)


#: Data search passes that added token_demand rows scored as new points, oldest first (the
#: ``search_pass`` column of ``datasets/token_demand.csv``; ``datasets/README.md`` describes each).
DEMAND_PASSES = (6, 9, 13, 14, 15, 16)


@pytest.fixture
def demand_as_of():
    """``demand_as_of(n)``: the in-fit rows of ``datasets/token_demand.csv`` as they stood once search
    pass ``n`` (one of :data:`DEMAND_PASSES`) was added, without the later passes' rows, and the mask
    of that pass's rows: a pass is scored against the dataset of its time."""
    import pandas as pd

    from tokenomics import catalog

    def rows(n: int):
        df = catalog.load("token_demand")
        df = df[df["in_fit"].astype(int) == 1]
        added = pd.to_numeric(df["search_pass"], errors="coerce")
        later = added.isin([p for p in DEMAND_PASSES if p > n]).to_numpy()
        return df[~later], (added[~later] == n)

    return rows


@pytest.fixture
def pass_scores(demand_as_of):
    """``pass_scores(n)``: (rows search pass ``n`` added, their rolling-origin scores by the method fitted
    on the dataset without them, :func:`tokenomics.forecast.backtest.score_new_points`, and each
    figure's score from its latest origin)."""
    from tokenomics.forecast.backtest import score_new_points

    def scores(n: int):
        df, late = demand_as_of(n)
        s = score_new_points(df[~late], df)
        return int(late.sum()), s, s.sort_values("origin_year").groupby(["series", "target_year"]).tail(1)

    return scores
