/**
 * Every function the engine (DuckDB 1.5, with the extensions vdb loads) has that user SQL may
 * not call, by the reason it is refused. Not what decides (allow-list.ts does: whatever is not
 * allowed is refused); this list exists so that a test notices an engine upgrade that brings a
 * function nobody has judged yet (test/engine/allow-list.test.ts).
 */
export const REFUSED_ENGINE_FUNCTIONS: ReadonlyArray<{ why: string; names: string }> = [
  {
    why: 'it reads files or attaches databases',
    names: `
    add_parquet_key arrow_scan arrow_scan_dumb copy_database glob import_database parquet_bloom_probe
    parquet_file_metadata parquet_full_metadata parquet_kv_metadata parquet_metadata parquet_scan
    parquet_schema parse_dirname parse_dirpath parse_filename parse_path read_blob read_csv read_csv_auto
    read_duckdb read_json read_json_auto read_json_objects read_json_objects_auto read_ndjson
    read_ndjson_auto read_ndjson_objects read_parquet read_text seq_scan sniff_csv
  `,
  },
  {
    why: 'it takes, plans or shows SQL text',
    names: `
    check_peg_parser current_query disable_peg_parser enable_peg_parser json_deserialize_sql
    json_execute_serialized_sql json_serialize_plan json_serialize_sql query query_table sql_auto_complete
  `,
  },
  {
    why: 'it inspects or changes the engine (settings, catalogs, logs, sequences, state)',
    names: `
    all_profiling_output checkpoint collations current_catalog current_connection_id current_database
    current_date current_localtime current_localtimestamp current_query_id current_role current_schema
    current_schemas current_setting current_transaction_id current_user currval database_list database_size
    disable_checkpoint_on_shutdown disable_logging disable_object_cache disable_optimizer
    disable_print_progress_bar disable_profile disable_profiling disable_progress_bar disable_verification
    disable_verify_external disable_verify_fetch_row disable_verify_parallelism disable_verify_serializer
    duckdb_approx_database_count duckdb_columns duckdb_connection_count duckdb_constraints
    duckdb_coordinate_systems duckdb_databases duckdb_dependencies duckdb_extensions
    duckdb_external_file_cache duckdb_functions duckdb_indexes duckdb_keywords duckdb_log_contexts
    duckdb_logs duckdb_logs_parsed duckdb_memory duckdb_optimizers duckdb_prepared_statements
    duckdb_profiling_settings duckdb_schemas duckdb_secret_types duckdb_secrets duckdb_sequences
    duckdb_settings duckdb_table_sample duckdb_tables duckdb_temporary_files duckdb_types duckdb_variables
    duckdb_views enable_checkpoint_on_shutdown enable_logging enable_object_cache enable_optimizer
    enable_print_progress_bar enable_profile enable_profiling enable_progress_bar enable_verification error
    extension_versions force_checkpoint functions get_block_size get_current_time get_current_timestamp
    getvariable icu_calendar_names in_search_path metadata_info nextval parse_duckdb_log_message pg_sleep
    pg_timezone_names platform pragma_collations pragma_database_size pragma_metadata_info pragma_platform
    pragma_show pragma_storage_info pragma_table_info pragma_user_agent pragma_version session_user setseed
    show show_databases show_tables show_tables_expanded sleep_ms stats storage_info summary table_info
    test_all_types test_vector_types truncate_duckdb_logs txid_current user user_agent vector_type
    verify_external verify_fetch_row verify_parallelism verify_serializer version which_secret write_log
  `,
  },
  {
    why: "it is one of PostgreSQL's catalog functions, which the engine answers from its own catalog",
    names: `
    col_description format_pg_type format_type has_any_column_privilege has_column_privilege
    has_database_privilege has_foreign_data_wrapper_privilege has_function_privilege has_language_privilege
    has_schema_privilege has_sequence_privilege has_server_privilege has_table_privilege
    has_tablespace_privilege inet_client_addr inet_client_port inet_server_addr inet_server_port
    map_to_pg_oid obj_description pg_collation_is_visible pg_conf_load_time pg_conversion_is_visible
    pg_function_is_visible pg_get_constraintdef pg_get_expr pg_get_viewdef pg_has_role
    pg_is_other_temp_schema pg_my_temp_schema pg_opclass_is_visible pg_operator_is_visible
    pg_opfamily_is_visible pg_postmaster_start_time pg_size_pretty pg_table_is_visible
    pg_ts_config_is_visible pg_ts_dict_is_visible pg_ts_parser_is_visible pg_ts_template_is_visible
    pg_type_is_visible shobj_description
  `,
  },
  {
    why: 'it answers otherwise than PostgreSQL does, or is PostgreSQL syntax rather than a function (GREATEST, NULLIF, ROW)',
    names: `
    date_add generate_subscripts greatest json_each json_extract_path
    json_extract_path_text json_tree least nullif range row sha256 split trim
  `,
  },
  {
    why: "it is part of the engine's internals (compression, sort keys, collations, casts, LIKE helpers)",
    names: `
    !__postfix __internal_compress_integral_ubigint __internal_compress_integral_uinteger
    __internal_compress_integral_usmallint __internal_compress_integral_utinyint
    __internal_compress_string_hugeint __internal_compress_string_ubigint
    __internal_compress_string_uhugeint __internal_compress_string_uinteger
    __internal_compress_string_usmallint __internal_compress_string_utinyint
    __internal_decompress_integral_bigint __internal_decompress_integral_hugeint
    __internal_decompress_integral_integer __internal_decompress_integral_smallint
    __internal_decompress_integral_ubigint __internal_decompress_integral_uhugeint
    __internal_decompress_integral_uinteger __internal_decompress_integral_usmallint
    __internal_decompress_string alias can_cast_implicitly cast_to_type combine constant_or_null
    create_sort_key finalize get_type icu_collate_af icu_collate_am icu_collate_ar icu_collate_ar_sa
    icu_collate_as icu_collate_az icu_collate_be icu_collate_bg icu_collate_bn icu_collate_bo icu_collate_br
    icu_collate_bs icu_collate_ca icu_collate_ceb icu_collate_chr icu_collate_cs icu_collate_cy
    icu_collate_da icu_collate_de icu_collate_de_at icu_collate_dsb icu_collate_dz icu_collate_ee
    icu_collate_el icu_collate_en icu_collate_en_us icu_collate_eo icu_collate_es icu_collate_et
    icu_collate_fa icu_collate_fa_af icu_collate_ff icu_collate_fi icu_collate_fil icu_collate_fo
    icu_collate_fr icu_collate_fr_ca icu_collate_fy icu_collate_ga icu_collate_gl icu_collate_gu
    icu_collate_ha icu_collate_haw icu_collate_he icu_collate_he_il icu_collate_hi icu_collate_hr
    icu_collate_hsb icu_collate_hu icu_collate_hy icu_collate_id icu_collate_id_id icu_collate_ig
    icu_collate_is icu_collate_it icu_collate_ja icu_collate_ka icu_collate_kk icu_collate_kl icu_collate_km
    icu_collate_kn icu_collate_ko icu_collate_kok icu_collate_ku icu_collate_ky icu_collate_lb
    icu_collate_lij icu_collate_lkt icu_collate_ln icu_collate_lo icu_collate_lt icu_collate_lv
    icu_collate_mk icu_collate_ml icu_collate_mn icu_collate_mr icu_collate_ms icu_collate_mt icu_collate_my
    icu_collate_nb icu_collate_nb_no icu_collate_ne icu_collate_nl icu_collate_nn icu_collate_noaccent
    icu_collate_nso icu_collate_om icu_collate_or icu_collate_pa icu_collate_pa_in icu_collate_pl
    icu_collate_ps icu_collate_pt icu_collate_ro icu_collate_ru icu_collate_sa icu_collate_se icu_collate_si
    icu_collate_sk icu_collate_sl icu_collate_smn icu_collate_sq icu_collate_sr icu_collate_sr_ba
    icu_collate_sr_me icu_collate_sr_rs icu_collate_st icu_collate_sv icu_collate_sw icu_collate_ta
    icu_collate_te icu_collate_th icu_collate_tk icu_collate_tn icu_collate_to icu_collate_tr icu_collate_ug
    icu_collate_uk icu_collate_ur icu_collate_uz icu_collate_vi icu_collate_wae icu_collate_wo
    icu_collate_xh icu_collate_yi icu_collate_yo icu_collate_yue icu_collate_yue_cn icu_collate_zh
    icu_collate_zh_cn icu_collate_zh_hk icu_collate_zh_mo icu_collate_zh_sg icu_collate_zh_tw icu_collate_zu
    icu_sort_key ilike_escape like_escape not_ilike_escape not_like_escape remap_struct replace_type
    timetz_byte_comparable typeof unpivot_list variant_bytes_to_variant variant_to_parquet_variant
  `,
  },
  {
    why: 'it is an operator of the engine only',
    names: `
    ** // <-> <=> ~~~
  `,
  },
  {
    why: "it is the engine's own function, not PostgreSQL's",
    names: `
    add aggregate ago any_value apply approx_count_distinct approx_quantile approx_top_k arbitrary arg_max
    arg_max_null arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin array_aggr
    array_aggregate array_apply array_concat array_contains array_cosine_distance array_cosine_similarity
    array_cross_product array_distance array_distinct array_dot_product array_extract array_filter
    array_grade_up array_has array_has_all array_has_any array_indexof array_inner_product array_intersect
    array_negative_dot_product array_negative_inner_product array_pop_back array_pop_front array_push_back
    array_push_front array_reduce array_resize array_reverse array_reverse_sort array_select array_slice
    array_sort array_to_string_comma_default array_transform array_unique array_value array_where array_zip
    bar base64 bin bit_count bit_position bitstring bitstring_agg century contains count_if count_star
    countif damerau_levenshtein date_diff date_sub datediff datepart datesub datetrunc day dayname
    dayofmonth dayofweek dayofyear days_in_month decade divide editdist3 element_at ends_with entropy
    enum_code enum_first enum_last enum_range enum_range_boundary epoch epoch_ms epoch_ns epoch_us
    equi_width_bins era even favg fdiv fill filter first flatten fmod formatReadableDecimalSize
    formatReadableSize format_bytes from_base64 from_binary from_hex from_json from_json_strict fsum gamma
    geomean geometric_mean get_bit grade_up greatest_common_divisor group_concat hamming hash hex histogram
    histogram_exact histogram_values hour instr is_histogram_other_bin isinf isnan isodow isoyear jaccard
    jaro_similarity jaro_winkler_similarity json json_array json_contains json_exists json_extract
    json_extract_string json_group_array json_group_object json_group_structure json_keys json_merge_patch
    json_object json_pretty json_quote json_structure json_transform json_transform_strict json_type
    json_valid json_value julian kahan_sum kurtosis kurtosis_pop last last_day lcase least_common_multiple
    left_grapheme len length_grapheme levenshtein lgamma list list_aggr list_aggregate list_any_value
    list_append list_apply list_approx_count_distinct list_avg list_bit_and list_bit_or list_bit_xor
    list_bool_and list_bool_or list_cat list_concat list_contains list_cosine_distance
    list_cosine_similarity list_count list_distance list_distinct list_dot_product list_element list_entropy
    list_extract list_filter list_first list_grade_up list_has list_has_all list_has_any list_histogram
    list_indexof list_inner_product list_intersect list_kurtosis list_kurtosis_pop list_last list_mad
    list_max list_median list_min list_mode list_negative_dot_product list_negative_inner_product list_pack
    list_position list_prepend list_product list_reduce list_resize list_reverse list_reverse_sort
    list_select list_sem list_skewness list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg
    list_sum list_transform list_unique list_value list_var_pop list_var_samp list_where list_zip listagg
    log2 mad make_timestamp_ms make_timestamp_ns make_type map map_concat map_contains map_contains_entry
    map_contains_value map_entries map_extract map_extract_value map_from_entries map_keys map_values max_by
    md5_number md5_number_lower md5_number_upper mean median microsecond millennium millisecond min_by
    minute mismatches month monthname multiply nanosecond nextafter nfc_normalize normalized_interval ord
    parse_formatted_bytes prefix printf product quantile quantile_cont quantile_disc quarter rank_dense
    reduce regexp_escape regexp_extract regexp_extract_all regexp_full_match
    repeat_row reservoir_quantile right_grapheme round_even roundbankers second sem set_bit sha1 signbit
    skewness st_asbinary st_astext st_aswkb st_aswkt st_crs st_geomfromwkb st_intersects_extent st_setcrs
    str_split str_split_regex strftime string_split string_split_regex strip_accents strlen strptime
    struct_concat struct_contains struct_extract struct_extract_at struct_has struct_indexof struct_insert
    struct_keys struct_pack struct_position struct_update struct_values substring_grapheme subtract suffix
    sum_no_overflow sumkahan switch time_bucket timezone_hour timezone_minute to_base to_base64 to_binary
    to_centuries to_days to_decades to_hours to_microseconds to_millennia to_milliseconds to_minutes
    to_months to_quarters to_seconds to_weeks to_years today try_strptime ucase unbin unhex unicode
    union_extract union_tag union_value url_decode url_encode uuid uuid_extract_timestamp
    uuid_extract_version variant_extract variant_normalize variant_typeof wavg week weekday weekofyear
    weighted_avg xor year yearweek
  `,
  },
];

/** Why the engine function `name` is refused, or null when it is not on this list. */
export function refusalReason(name: string): string | null {
  return REFUSED_ENGINE_FUNCTIONS.find((group) => group.names.split(/\s+/).includes(name))?.why ?? null;
}
