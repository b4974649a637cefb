-- A WorkflowItem as GET /v1/workflows/{id}/items shows it, with the one destination the event is about.
CREATE OR REPLACE FUNCTION crier_workflow_item_json(i workflow_items) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('workflow_id', i.workflow_id, 'item', jsonb_build_object(
    'id', s.id, 'source_item_id', s.source_item_id, 'source_url', s.source_url, 'kind', s.kind,
    'published_at', crier_iso(s.published_at), 'created_at', crier_iso(s.created_at),
    'updated_at', crier_iso(s.updated_at),
    'destinations', jsonb_build_array(jsonb_build_object(
      'account_id', i.account_id, 'platform', (SELECT a.platform FROM accounts a WHERE a.id = i.account_id),
      'status', i.status, 'slot_at', crier_iso(i.slot_at), 'reason_code', i.reason_code, 'reason', i.reason,
      'caption', i.caption, 'post_id', i.post_id))))
  FROM workflow_sources s WHERE s.id = i.source_id
$$;
