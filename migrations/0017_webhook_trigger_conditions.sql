-- Most servers have no webhook endpoint, yet every insert of a post and every insert or update of a target
-- (a claim, a result, a lease renewal) ran a plpgsql trigger function per row only to find that nobody
-- listens; the deferred ones were queued and run at the commit. In bench/dispatch that was a third of a
-- claim's time. The condition now sits in each trigger's WHEN, checked as the row changes: a row nobody
-- listens to queues nothing and calls nothing. The functions still check it (an endpoint deactivated before
-- the commit).
DROP TRIGGER "crier_webhook_posts" ON "posts";--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "crier_webhook_posts" AFTER INSERT ON "posts"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (crier_webhooks_listening(NEW.profile_id))
  EXECUTE FUNCTION crier_webhook_posts_trigger();--> statement-breakpoint
DROP TRIGGER "crier_webhook_targets" ON "post_targets";--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "crier_webhook_targets" AFTER INSERT OR UPDATE ON "post_targets"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (crier_webhooks_listening(NEW.profile_id))
  EXECUTE FUNCTION crier_webhook_targets_trigger();--> statement-breakpoint
DROP TRIGGER "crier_webhook_targets_before" ON "post_targets";--> statement-breakpoint
CREATE TRIGGER "crier_webhook_targets_before" BEFORE UPDATE OF "status" ON "post_targets"
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND crier_webhooks_listening(NEW.profile_id))
  EXECUTE FUNCTION crier_webhook_targets_before_trigger();
