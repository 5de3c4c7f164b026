"""Each tool's MCP ``outputSchema`` (revision 2025-06-18 on), from the top-level fields its
answers carry.

Why a table here and not in tools.json: the manifest is what the assistant's host reads and sends
to the model; output shapes are an MCP matter and would only lengthen it. Why top-level fields
only: nested shapes differ per mode and format, and a schema that is wrong makes strict clients
(the official SDKs validate) refuse a good answer. So the schema is honest and loose: ``ok``
(boolean) is required, every field a tool returns is declared with its JSON type (null allowed:
many fields are null when they do not apply), ``warnings`` is a list of strings, and unknown
fields are allowed. tests/test_mcp_structured.py runs every tool and fails when an answer has a
field this table does not declare, so the table follows the tools.
"""

COMMON = {"ok": "boolean", "error": "string", "warnings": "array"}

# tool -> {field: "type" or "type|type"} (JSON types; "number" covers integers).
FIELDS = {
    "calc_table": {"available_columns": "array", "complete": "boolean", "group_by": "array", "group_count": "number", "groups": "array",
        "header_reason": "string", "header_row": "number", "header_rows": "array", "limit": "number",
        "metrics": "array", "next_offset": "number", "offset": "number", "returned": "number",
        "rows_filtered_out": "number", "rows_used": "number", "sheet": "string", "sheets": "array",
        "skipped": "object", "stopped_at": "number", "total": "number", "totals_rows_excluded": "number",
        "truncated": "boolean"},
    "clean_table": {"available_columns": "array", "backup": "string", "changed": "object", "changed_cells": "number",
        "changes": "array", "code_columns": "array", "column_count": "number", "columns": "array",
        "complete": "boolean", "dropped": "object", "format": "string", "header_reason": "string",
        "header_row": "number", "out_sheet": "string", "path": "string", "preview": "array", "preview_rows": "array",
        "rows_read": "number", "rows_written": "number", "sheet": "string", "sheets": "array", "source": "string",
        "stopped_at": "number", "summary": "string", "totals_rows_kept": "number"},
    "current_time": {"clock_offset_seconds": "number", "date": "string", "is_dst": "boolean", "iso": "string",
        "network_errors": "array", "source": "string", "source_site": "string", "time": "string",
        "timestamp": "number", "timezone": "string", "utc": "string", "utc_offset": "string", "weekday": "string"},
    "dedupe_table": {"available_columns": "array", "backup": "string", "column_count": "number", "columns": "array",
        "complete": "boolean", "converted_columns": "array", "duplicate_groups": "number",
        "duplicate_rows": "number", "empty_key_rows": "number", "format": "string", "groups": "array",
        "header_reason": "string", "header_row": "number", "keep": "string", "keys": "array|string",
        "limit": "number", "mode": "string", "next_offset": "number", "offset": "number", "out_sheet": "string",
        "path": "string", "preview": "array", "preview_rows": "array", "removed": "number", "returned": "number",
        "rows_after": "number", "rows_before": "number", "rows_in_groups": "number", "rows_scanned": "number",
        "rows_written": "number", "sheet": "string", "source": "string", "total": "number", "truncated": "boolean"},
    "delete_file": {"deleted": "string", "kept_days": "number", "note": "string", "path": "string",
        "restore": "string", "size": "number", "size_text": "string", "trash_id": "string", "trash_path": "string", "type": "string"},
    "restore_file": {"candidates": "array", "deleted_at": "string", "items": "array", "kept_days": "number",
        "note": "string", "original": "string", "path": "string", "restored": "string", "size": "number",
        "size_text": "string", "suggested_to": "string", "total": "number", "type": "string"},
    "draw_chart": {"bytes": "number", "font": "string", "height": "number", "missing_chars": "string",
        "path": "string", "summary": "string", "width": "number"},
    "fetch_url": {"blocked": "string", "content_type": "string", "description": "string", "encoding": "string",
        "kind": "string", "links": "array", "links_total": "number", "max_chars": "number", "next_start": "number",
        "note": "string", "requested_url": "string", "returned_chars": "number", "size": "number", "start": "number",
        "status": "number", "text": "string", "title": "string", "total_chars": "number", "truncated": "boolean",
        "url": "string"},
    "file_info": {"accessed": "string", "changed": "string", "content_detail": "string", "content_kind": "string",
        "created": "string", "created_note": "string", "entries": "number", "executable": "boolean",
        "extension": "string", "gid": "number", "group": "string", "hidden": "boolean", "is_symlink": "boolean",
        "link_target": "string", "mode_octal": "string", "modified": "string", "name": "string", "note": "string",
        "owner": "string", "path": "string", "permissions": "string", "read_with": "string", "readable": "boolean",
        "real_path": "string", "size": "number", "size_text": "string", "suffix_mismatch": "boolean",
        "target_size": "number", "target_size_text": "string", "target_type": "string", "text_encoding": "string",
        "type": "string", "uid": "number", "writable": "boolean"},
    "filter_table": {"available_columns": "array", "backup": "string", "column_count": "number", "columns": "array",
        "complete": "boolean", "converted_columns": "array", "format": "string", "header_reason": "string",
        "header_row": "number", "match_count": "number", "out_sheet": "string", "path": "string", "preview": "array",
        "preview_rows": "array", "rows_scanned": "number", "sheet": "string", "source": "string",
        "suggestions": "array", "written": "number"},
    "find_files": {"depth": "number", "depth_limited": "boolean", "dirs_scanned": "number", "dirs_skipped": "number",
        "dirs_unreadable": "number", "entries": "array", "incomplete": "boolean", "limit": "number",
        "matched": "number", "path": "string", "pattern": "string", "pattern_kind": "string", "returned": "number",
        "scanned": "number", "truncated": "boolean"},
    "list_dir": {"entries": "array", "hidden_note": "string", "limit": "number", "next_offset": "number",
        "offset": "number", "omitted": "number", "path": "string", "returned": "number", "sort_by": "string",
        "summary": "object", "total": "number", "truncated": "boolean"},
    "lookup_table": {"available_columns": "array", "backup": "string", "brought_columns": "array",
        "column_count": "number", "columns": "array", "complete": "boolean", "converted_columns": "array",
        "examples": "object", "format": "string", "left": "object", "left_duplicate_keys": "number",
        "left_empty_keys": "number", "left_key": "string", "left_keys": "number", "left_total": "number",
        "left_value": "string", "matched": "number", "mismatch_difference": "number", "mode": "string",
        "near_misses": "array", "only_left_total": "number", "only_right_total": "number", "out_sheet": "string",
        "path": "string", "preview": "array", "preview_rows": "array", "preview_shortened": "boolean",
        "right": "object", "right_duplicate_keys": "number", "right_duplicates": "array", "right_key": "string",
        "right_keys": "number", "right_total": "number", "right_value": "string", "rows_written": "number",
        "status_counts": "object", "tolerance": "number", "total_difference": "number", "unmatched_left": "number",
        "unmatched_left_examples": "array", "unmatched_right": "number", "unmatched_right_examples": "array"},
    "lunar_date": {"also": "array", "current_solar_term": "object", "date": "string", "days_from_today": "number",
        "display": "string", "festival": "string", "festivals": "array", "ganzhi": "object", "ganzhi_rule": "string",
        "lunar_day": "number", "lunar_day_cn": "string", "lunar_ganzhi": "string", "lunar_leap": "boolean",
        "lunar_month": "number", "lunar_month_cn": "string", "lunar_month_days": "number",
        "lunar_month_size": "string", "lunar_shengxiao": "string", "lunar_year": "number",
        "lunar_year_leap_month": "number", "next_festival": "object", "next_solar_term": "object", "note": "string",
        "query": "string", "solar_term": "object", "text": "string", "uncertain": "boolean", "weekday": "string"},
    "pivot_table": {"available_columns": "array", "backup": "string", "col_field": "string", "col_keys": "number",
        "cols_other": "number", "column_count": "number", "complete": "boolean", "counts": "string",
        "format": "string", "func": "string", "grand_total": "number", "header_row": "number", "limit": "number",
        "next_offset": "number", "offset": "number", "out_sheet": "string", "path": "string", "preview": "array",
        "returned": "number", "row_count": "number", "row_field": "string", "row_keys": "number",
        "rows_filtered_out": "number", "rows_other": "number", "rows_used": "number", "sheet": "string",
        "source": "string", "top_cols": "array", "top_rows": "array", "total": "number", "total_row": "array",
        "truncated": "boolean", "value_field": "string"},
    "probe_table": {"column_count": "number", "columns": "array", "combined_header": "array", "data_rows": "number",
        "delimiter": "string", "encoding": "string", "format": "string", "formula_without_value": "object",
        "header_reason": "string", "header_row": "number", "header_rows": "array", "hidden_sheets": "array",
        "merged_in_data": "array", "next_call": "object", "preview": "array", "preview_rows": "array",
        "rows_exact": "boolean", "sampled_rows": "number", "sheet": "string", "sheet_names": "array",
        "totals_rows": "array"},
    "query_express": {"candidates": "array", "company": "string", "company_name": "string", "errors": "array",
        "latest": "object", "number": "string", "returned": "number", "status": "string", "status_code": "number",
        "time_used": "string", "total": "number", "traces": "array"},
    "query_ip": {"errors": "array", "ip": "string", "is_public": "boolean", "source": "string"},
    "query_location": {"area_code": "string", "city": "string", "country": "string", "district": "string",
        "ip": "string", "isp": "string", "latitude": "string", "location": "string", "longitude": "string",
        "post_code": "string", "province": "string", "region": "string", "source": "string"},
    "query_weather": {"city": "string", "days": "array", "resolved": "string", "returned": "number",
        "slug": "string", "source_url": "string", "today": "object"},
    "read_document": {"format": "string", "format_name": "string", "kind": "string", "max_chars": "number",
        "next_offset": "number", "offset": "number", "pages": "number", "path": "string", "returned_chars": "number",
        "scanned": "boolean", "text": "string", "title": "string", "total_chars": "number", "truncated": "boolean"},
    "read_spreadsheet": {"delimiter": "string", "encoding": "string", "format": "string",
        "formula_without_value": "object", "hidden_sheets": "array", "sheet_names": "array", "sheets": "array"},
    "read_text_file": {"content": "string", "encoding": "string", "encoding_label": "string",
        "encoding_reason": "string", "end_line": "number", "lines_cut": "number", "newline": "string",
        "next_start_line": "number", "partial_read": "boolean", "path": "string", "previous_start_line": "number",
        "returned_lines": "number", "size": "number", "size_text": "string", "start_line": "number",
        "total_lines": "number", "truncated": "boolean"},
    "run_python": {"args": "array", "blocked": "array", "duration": "number", "exit_code": "number",
        "fence": "object", "path": "string", "stderr": "string", "stderr_bytes": "number",
        "stderr_truncated": "boolean", "stdout": "string", "stdout_bytes": "number", "stdout_truncated": "boolean",
        "summary": "string", "timed_out": "boolean"},
    "web_search": {"engine": "string", "errors": "array", "query": "string", "results": "array",
        "returned": "number", "search_url": "string"},
    "convert_document": {"backup": "string", "bytes": "number", "format": "string", "message": "string", "pages": "number",
        "path": "string", "seconds": "number", "source": "string"},
    "write_document": {"action": "string", "backup": "string", "headings": "number", "list_items": "number",
        "message": "string", "mode": "string", "paragraphs": "number", "path": "string", "pictures": "number",
        "tables": "number", "total_chars": "number"},
    "write_spreadsheet": {"action": "string", "backup": "string", "columns": "number", "delimiter": "string",
        "encoding": "string", "format": "string", "header_skipped": "boolean", "message": "string", "mode": "string",
        "path": "string", "position": "string", "rows_written": "number", "sheet": "string", "sheets": "array",
        "start_row": "number", "total_rows": "number", "totals_moved": "object", "totals_updated": "array",
        "would_lose": "array"},
    "write_text": {"action": "string", "backup": "string", "bytes": "number", "chars_written": "number",
        "encoding": "string", "message": "string", "mode": "string", "path": "string", "total_chars": "number"},
}


def _prop(spec):
    if spec.startswith("any"):
        return {}
    types = spec.split("|")
    if "number" in types and "integer" in types:
        types.remove("integer")
    return {"type": types[0] if len(types) == 1 else types}


def output_schema(name):
    """The outputSchema of tool ``name`` (an unknown tool gets the common fields only)."""
    props = {"ok": {"type": "boolean"}, "error": {"type": "string"},
             "warnings": {"type": "array", "items": {"type": "string"}}}
    for field, spec in sorted(FIELDS.get(name, {}).items()):
        if field not in props:
            props[field] = _prop(spec + "|null")
    return {"type": "object", "properties": props, "required": ["ok"], "additionalProperties": True}
