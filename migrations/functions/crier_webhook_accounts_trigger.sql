-- account.connected / disconnected / auth_required…, deferred to the commit (trigger crier_webhook_accounts).
CREATE OR REPLACE FUNCTION crier_webhook_accounts_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  cur accounts;
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.status <> 'disconnected' THEN
      PERFORM crier_webhook_emit(OLD.profile_id, 'account.disconnected',
        crier_account_json(OLD) || jsonb_build_object('status', 'disconnected'));
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS NOT DISTINCT FROM NEW.status THEN RETURN NULL; END IF;
  SELECT * INTO cur FROM accounts WHERE id = NEW.id;
  IF NOT FOUND OR cur.status <> NEW.status THEN RETURN NULL; END IF;
  PERFORM crier_webhook_emit(NEW.profile_id, CASE NEW.status WHEN 'active' THEN 'account.connected'
    ELSE 'account.' || NEW.status END, crier_account_json(cur));
  RETURN NULL;
END $$;
