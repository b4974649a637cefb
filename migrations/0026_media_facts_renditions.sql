-- What a media's file is, read once when its upload completes (src/media/probe.ts): format, size in
-- pixels, orientation, animation and location metadata for images; container, codecs, duration, size,
-- rotation and frame rate for video. poster_path is the stored poster frame of a video (no cover given).
ALTER TABLE media ADD COLUMN facts jsonb;
--> statement-breakpoint
ALTER TABLE media ADD COLUMN poster_path text;
--> statement-breakpoint
-- A media converted for a platform (JPEG instead of PNG, downscaled, MP4 instead of MOV, metadata
-- stripped): one row per media and output variant, however many targets use it. The copy converting it
-- holds the lease (lease_until); a copy that dies leaves it to be taken again once the lease ends.
CREATE TABLE media_renditions (
  media_id uuid NOT NULL REFERENCES media(id) ON DELETE CASCADE,
  variant text NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  path text,
  content_type text,
  size_bytes bigint,
  facts jsonb,
  error text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (media_id, variant)
);
