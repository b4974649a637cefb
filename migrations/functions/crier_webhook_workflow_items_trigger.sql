-- workflow.item_queued / posted / skipped, deferred to the commit (trigger crier_webhook_workflow_items).
CREATE OR REPLACE FUNCTION crier_webhook_workflow_items_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  cur workflow_items;
BEGIN
  IF NEW.status NOT IN ('queued', 'posted', 'skipped') THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS NOT DISTINCT FROM NEW.status THEN RETURN NULL; END IF;
  SELECT * INTO cur FROM workflow_items WHERE id = NEW.id;
  IF NOT FOUND OR cur.status <> NEW.status THEN RETURN NULL; END IF;
  PERFORM crier_webhook_emit(NEW.profile_id, 'workflow.item_' || NEW.status, crier_workflow_item_json(cur));
  RETURN NULL;
END $$;
